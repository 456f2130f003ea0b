// Integration tests of the START coder_script: rendered by `terraform apply`,
// run as `/bin/sh -c` in a throwaway HOME against real AgentAPI binaries and
// the Goose under test (the double, or a real Goose with GOOSE_BIN), counting
// how often the task prompt reaches Goose in Goose's own database.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { request } from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type GooseMessage,
  gooseMessages,
  gooseTarball,
  gooseUnderTest,
  ReleaseMirror,
  type Rendered,
  type RunResult,
  repoRoot,
  resourceValues,
  run,
  sha256,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import {
  agentapiPids,
  cmdline,
  expectOk,
  flat,
  launchRecord,
  newWorkspace,
  PROMPT,
  render,
  SESSION,
  stop,
  task,
  WORKSPACE_ID,
  waitTurns,
} from "./scenario.js";

const mirrors: ReleaseMirror[] = [];

afterEach(async () => {
  for (const mirror of mirrors.splice(0)) await mirror.close();
});

/** Runs a script with an explicit PATH (for example one without agentapi or goose on it). */
function runWithPath(ws: Workspace, script: string, pathDirs: string[]): Promise<RunResult> {
  return run("/bin/sh", ["-c", script], { cwd: ws.home, env: { ...ws.env(), PATH: pathDirs.join(":") } });
}

type Event = Record<string, any>;

/** Goose processes AgentAPI launched, from the double's event log (not `--version`, `session list` or `session export` probes). */
function agentLaunches(events: Event[]): Event[] {
  return events.filter(
    (e) =>
      e.event === "start" &&
      (e.argv[1] === "run" || e.argv[1] === "session") &&
      e.argv[2] !== "list" &&
      e.argv[2] !== "export",
  );
}

/**
 * The session of each time Goose received `text` as a user message, oldest
 * first: its user-visible rows in Goose's own database, so this holds for
 * the double and a real Goose alike.
 */
async function deliveredIn(ws: Workspace, text = PROMPT): Promise<string[]> {
  return (await gooseMessages(ws.gooseDb, "user"))
    .filter((m) => m.userVisible && m.text === text)
    .map((m) => m.sessionId);
}

/** Goose's replies (its `assistant` rows), oldest first; with `sessionId`, only that session's. */
async function gooseReplies(ws: Workspace, sessionId?: string): Promise<GooseMessage[]> {
  return (await gooseMessages(ws.gooseDb, "assistant")).filter(
    (m) => sessionId === undefined || m.sessionId === sessionId,
  );
}

/** The first words of a reply: enough to tell replies apart on AgentAPI's screen, too short to wrap there. */
function head(reply: GooseMessage | undefined): string {
  expect(reply, "a reply in Goose's database").toBeDefined();
  return flat(reply!.text).split(" ").slice(0, 4).join(" ");
}

/**
 * The Goose command line AgentAPI runs: what follows `--` in its own, past the
 * env(1) that gives Goose the user's TMPDIR back (`env TMPDIR=...` or `env -u TMPDIR`).
 */
async function agentCommand(pid: number): Promise<string[]> {
  const argv = await cmdline(pid);
  const command = argv.slice(argv.indexOf("--") + 1);
  expect(command[0]).toBe("env");
  return command.slice(command[1] === "-u" ? 3 : 2);
}

interface ListedSession {
  id: string;
  name: string;
  working_dir: string;
  message_count: number;
}

/** What Goose itself reports (`goose session list --format json`), run with the workspace's environment. */
async function gooseSessions(ws: Workspace): Promise<ListedSession[]> {
  return JSON.parse(await ws.gooseSessionList());
}

async function readPid(file: string): Promise<number> {
  const text = await readFile(file, "utf8");
  expect(text).toMatch(/^[0-9]+\n?$/);
  return Number(text.trim());
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function setAsideFiles(stateFile: string): Promise<string[]> {
  const names = await readdir(path.dirname(stateFile));
  return names
    .filter((n) => n.startsWith(`${path.basename(stateFile)}.set-aside-`))
    .map((n) => path.join(path.dirname(stateFile), n));
}

/** A GET with a chosen Host header (fetch does not allow setting it). */
function getVia(port: number, route: string, host: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: route, headers: { Host: host } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, location: res.headers.location });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("start script", () => {
  it("cold start with default paths: named session, prompt once, --type goose, state and PID files in the module folder", async () => {
    const ws = await newWorkspace();
    // No session_name: the module derives a stable one from the workspace ID.
    const rendered = await render(ws, { session_name: "" });
    const sessionName = `coder-${WORKSPACE_ID}`;
    expect(rendered.outputs.session_name).toBe(sessionName);

    const started = await ws.runScript(rendered.start);
    expectOk(started, "start script");
    expect(await ws.status()).not.toBeNull();
    await waitTurns(ws, 1);

    const sessions = (await gooseSessions(ws)).filter((s) => s.name === sessionName);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.working_dir).toBe(path.join(ws.home, "project"));
    // Delivered once, into the named session.
    expect(await deliveredIn(ws)).toEqual([sessions[0]!.id]);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    const [reply] = await gooseReplies(ws, sessions[0]!.id);

    const pidFile = path.join(ws.moduleDir, "agentapi.pid");
    const stateFile = path.join(ws.moduleDir, "agentapi-state.json");
    const pid = await readPid(pidFile);
    const argv = await cmdline(pid);
    expect(path.basename(argv[0]!)).toBe("agentapi");
    const own = argv.slice(0, argv.indexOf("--"));
    expect(own).toContain("server");
    expect(own.join(" ")).toContain("--type goose");
    expect(own.join(" ")).toContain(`--port ${ws.port}`);
    expect(own[own.indexOf("--state-file") + 1]).toBe(stateFile);
    expect(own[own.indexOf("--pid-file") + 1]).toBe(pidFile);
    expect(await agentapiPids(ws)).toEqual([pid]);
    expect((await stat(path.join(ws.moduleDir, "logs", "agentapi.log"))).isFile()).toBe(true);

    // Path-based app (subdomain = false): the chat links under Coder's app path, and
    // requests through the dashboard's host name are accepted.
    const accessUrl = String(resourceValues(rendered, "module.goose.data.coder_workspace.me").access_url);
    const root = await getVia(ws.port, "/", new URL(accessUrl).host);
    expect(root.status).toBe(307);
    expect(root.location).toMatch(/^\/@[^/]+\/[^/]+\.test-agent\/apps\/goose\/chat\/embed/);

    // AgentAPI writes the state file when it stops: it lands at the default path.
    await stop(ws, rendered);
    const state = JSON.parse(await readFile(stateFile, "utf8"));
    expect(state.version).toBe(1);
    expect(flat(state.messages.map((m: { message: string }) => m.message).join(" "))).toContain(head(reply));
  });

  it("cold start with custom state_file_path and pid_file_path under HOME", async () => {
    const ws = await newWorkspace();
    const stateFile = path.join(ws.home, "persist dir", "chat state.json");
    const pidFile = path.join(ws.home, "run", "goose agentapi.pid");
    const rendered = await render(ws, { state_file_path: stateFile, pid_file_path: pidFile });

    expectOk(await ws.runScript(rendered.start), "start script");
    await waitTurns(ws, 1);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect((await gooseSessions(ws)).filter((s) => s.name === SESSION)).toHaveLength(1);

    const pid = await readPid(pidFile);
    const argv = await cmdline(pid);
    expect(argv.join(" ")).toContain("--type goose");
    expect(argv[argv.indexOf("--state-file") + 1]).toBe(stateFile);
    expect(argv[argv.indexOf("--pid-file") + 1]).toBe(pidFile);
    expect(await exists(path.join(ws.moduleDir, "agentapi.pid"))).toBe(false);
    expect(await exists(path.join(ws.moduleDir, "logs", "agentapi.log"))).toBe(true);

    await stop(ws, rendered);
    expect(JSON.parse(await readFile(stateFile, "utf8")).version).toBe(1);
    expect(await exists(path.join(ws.moduleDir, "agentapi-state.json"))).toBe(false);
  });

  it("warm start after a stop resumes the session by name, without the prompt, with the chat restored", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    expectOk(await ws.runScript(rendered.start), "first start");
    await waitTurns(ws, 1);
    await ws.send("Also update the changelog");
    const [session] = (await gooseSessions(ws)).filter((s) => s.name === SESSION);
    expect(session).toBeDefined();
    const replies = await gooseReplies(ws, session!.id);
    expect(replies).toHaveLength(2);
    await stop(ws, rendered);

    const before = (await ws.events()).length;
    const started = await ws.runScript(rendered.start);
    expectOk(started, "second start");
    expect(started.stdout).toContain("warm start");
    const record = await launchRecord(ws);
    expect(record.mode).toBe("warm");
    // The last turn was answered: nothing to carry on, so nothing is typed.
    expect(record.interrupted_turn.action, record.interrupted_turn.reason).toBe("none");
    const [pid] = await agentapiPids(ws);
    expect(pid).toBeDefined();
    expect((await agentCommand(pid!)).slice(1)).toEqual(["session", "--resume", "--name", SESSION, "--history"]);

    // AgentAPI loads the saved chat once Goose shows its prompt.
    await ws.waitFor("restored chat history", async () => {
      const messages = await ws.messages().catch(() => []);
      return messages.some((m) => m.role === "user" && m.content.includes("Also update the changelog"));
    });
    await ws.waitStable();
    const restored = flat((await ws.messages()).map((m) => m.content).join(" "));
    expect(restored).toContain(head(replies[0]));
    expect(restored).toContain(head(replies[1]));
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect((await gooseSessions(ws)).filter((s) => s.name === SESSION).map((s) => s.id)).toEqual([session!.id]);
    if (!ws.goose.real) {
      // The double's own account: one interactive Goose, resuming, creating nothing.
      const events = (await ws.events()).slice(before);
      const launches = agentLaunches(events);
      expect(launches).toHaveLength(1);
      expect(launches[0]!.argv.slice(1)).toEqual(["session", "--resume", "--name", SESSION, "--history"]);
      expect(events.filter((e) => e.event === "resume")).toEqual([
        expect.objectContaining({ session_name: SESSION, session_id: session!.id }),
      ]);
      expect(events.some((e) => e.event === "session_created")).toBe(false);
    }

    // Goose kept its memory: the next turn lands in the same session, as its third.
    await ws.send("What did I ask before?");
    expect(await deliveredIn(ws, "What did I ask before?")).toEqual([session!.id]);
    const after = await gooseReplies(ws, session!.id);
    expect(after).toHaveLength(3);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    // The double numbers its replies by the user messages stored in the session.
    if (!ws.goose.real) expect(after[2]!.text).toMatch(/^Goose double reply #3:/);
  });

  it("continue = false starts a fresh session each time and sets the previous chat aside", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { continue: false });
    const stateFile = path.join(ws.moduleDir, "agentapi-state.json");
    expectOk(await ws.runScript(rendered.start), "first start");
    await waitTurns(ws, 1);
    const [first] = await gooseSessions(ws);
    expect(first).toBeDefined();
    await stop(ws, rendered);
    const savedState = await readFile(stateFile, "utf8");

    const before = (await ws.events()).length;
    expectOk(await ws.runScript(rendered.start), "second start");
    await waitTurns(ws, 2);
    expect((await launchRecord(ws)).mode).toBe("cold");
    const [pid] = await agentapiPids(ws);
    expect(await agentCommand(pid!)).not.toContain("--resume");

    const named = (await gooseSessions(ws)).filter((s) => s.name === SESSION);
    expect(named).toHaveLength(2);
    const created = named.find((s) => s.id !== first!.id);
    expect(created).toBeDefined();
    // A new session is a cold start, so it gets the task prompt, once.
    expect(await deliveredIn(ws)).toEqual([first!.id, created!.id]);
    if (!ws.goose.real) {
      const events = (await ws.events()).slice(before);
      expect(events.some((e) => e.event === "resume")).toBe(false);
      expect(events.filter((e) => e.event === "session_created")).toEqual([
        expect.objectContaining({ session_id: created!.id }),
      ]);
    }

    // The old chat is kept on disk, not shown for the new session.
    const aside = await setAsideFiles(stateFile);
    expect(aside).toHaveLength(1);
    expect(await readFile(aside[0]!, "utf8")).toBe(savedState);
    const messages = await ws.messages();
    const screen = flat(messages.map((m) => m.content).join(" "));
    expect(screen).toContain(head((await gooseReplies(ws, created!.id))[0]));
    // Goose's banner names the session: the new one, never the old.
    expect(screen).toContain(created!.id);
    expect(screen).not.toContain(first!.id);
    expect(messages.filter((m) => m.role === "user")).toEqual([]);
    // The double numbers replies per session: the new one's first reply is #1 again, and there is no #2.
    if (!ws.goose.real) expect(screen).not.toContain("Goose double reply #2");
  });

  it("AgentAPI v0.11.8: no persistence flags, one warning naming the version, the agent still runs", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    const started = await ws.runScript(rendered.start, tools.agentapiOld);
    expectOk(started, "start script");

    const warnings = `${started.stdout}\n${started.stderr}`
      .split("\n")
      .filter((line) => /warn/i.test(line) && line.includes(tools.agentapiOldVersion));
    expect(warnings).toHaveLength(1);
    expect(await ws.status()).not.toBeNull();

    const pidFile = path.join(ws.moduleDir, "agentapi.pid");
    const pid = await readPid(pidFile);
    const argv = await cmdline(pid);
    expect(argv[0]).toBe(tools.agentapiOld);
    expect(argv.join(" ")).toContain("--type goose");
    const own = argv.slice(0, argv.indexOf("--"));
    expect(own.some((a) => a.startsWith("--state-file"))).toBe(false);
    expect(own.some((a) => a.startsWith("--pid-file"))).toBe(false);
    expect(await agentapiPids(ws)).toEqual([pid]);

    await waitTurns(ws, 1);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect((await gooseSessions(ws)).filter((s) => s.name === SESSION)).toHaveLength(1);
  });

  it("a session that exists without a user message is a cold start; the prompt reaches Goose once in total", async () => {
    const ws = await newWorkspace();
    const folder = path.join(ws.home, "project");
    await mkdir(folder, { recursive: true });
    // Goose died before the prompt was stored: the named session exists, empty.
    const empty = await run(ws.goose.bin, ["session", "--name", SESSION], {
      cwd: folder,
      env: {
        ...ws.env(),
        GOOSE_PROVIDER: ws.goose.provider ?? "anthropic",
        GOOSE_MODEL: ws.goose.model ?? "claude-sonnet-4-5",
        GOOSE_TELEMETRY_ENABLED: "false",
      },
      input: "",
    });
    expectOk(empty, "creating the empty session");
    const [emptySession] = await gooseSessions(ws);
    expect(emptySession).toMatchObject({ name: SESSION, message_count: 0 });

    const rendered = await render(ws);
    const before = (await ws.events()).length;
    expectOk(await ws.runScript(rendered.start), "first start");
    await waitTurns(ws, 1);
    expect((await launchRecord(ws)).mode).toBe("cold");
    const named = (await gooseSessions(ws)).filter((s) => s.name === SESSION);
    expect(named).toHaveLength(2);
    const created = named.find((s) => s.id !== emptySession!.id);
    expect(created).toBeDefined();
    expect(await deliveredIn(ws)).toEqual([created!.id]);
    if (!ws.goose.real) {
      const events = (await ws.events()).slice(before);
      expect(events.some((e) => e.event === "resume")).toBe(false);
      expect(events.filter((e) => e.event === "session_created")).toEqual([
        expect.objectContaining({ session_id: created!.id }),
      ]);
    }

    // The next start resumes the session that holds the prompt, and sends nothing again.
    await stop(ws, rendered);
    const mid = (await ws.events()).length;
    expectOk(await ws.runScript(rendered.start), "second start");
    expect((await launchRecord(ws)).mode).toBe("warm");
    const [pid] = await agentapiPids(ws);
    expect((await agentCommand(pid!)).slice(1)).toEqual(["session", "--resume", "--name", SESSION, "--history"]);
    await ws.send("Which session is this?");
    expect(await deliveredIn(ws, "Which session is this?")).toEqual([created!.id]);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    if (!ws.goose.real) {
      const events = (await ws.events()).slice(mid);
      expect(events.filter((e) => e.event === "resume")).toEqual([
        expect.objectContaining({ session_id: created!.id }),
      ]);
    }
  });

  it("a lost Goose database with a state file present: the state is set aside and the start is cold", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    const stateFile = path.join(ws.moduleDir, "agentapi-state.json");
    expectOk(await ws.runScript(rendered.start), "first start");
    await waitTurns(ws, 1);
    await ws.send("Remember the blue elephant");
    await stop(ws, rendered);
    const savedState = await readFile(stateFile, "utf8");
    expect(savedState).toContain("blue elephant");

    await rm(path.dirname(path.dirname(ws.gooseDb)), { recursive: true, force: true });
    const before = (await ws.events()).length;
    const started = await ws.runScript(rendered.start);
    expectOk(started, "second start");
    // A new database: its first reply is the new session's answer to the prompt.
    await waitTurns(ws, 1);
    expect((await launchRecord(ws)).mode).toBe("cold");
    const [pid] = await agentapiPids(ws);
    expect(await agentCommand(pid!)).not.toContain("--resume");
    const named = (await gooseSessions(ws)).filter((s) => s.name === SESSION);
    expect(named).toHaveLength(1);
    expect(await deliveredIn(ws)).toEqual([named[0]!.id]);
    if (!ws.goose.real) {
      const events = (await ws.events()).slice(before);
      expect(events.some((e) => e.event === "resume")).toBe(false);
      expect(events.filter((e) => e.event === "session_created")).toHaveLength(1);
    }

    const aside = await setAsideFiles(stateFile);
    expect(aside).toHaveLength(1);
    expect(await readFile(aside[0]!, "utf8")).toBe(savedState);
    expect(started.stdout).toContain(aside[0]!);

    const messages = await ws.messages();
    expect(messages.some((m) => m.content.includes("blue elephant"))).toBe(false);
    expect(messages.some((m) => m.role === "user")).toBe(false);
  });

  it.each([
    ["v0.12.2", () => tools.agentapiNew],
    ["v0.11.8", () => tools.agentapiOld],
  ])("a second run while AgentAPI %s runs starts nothing new", async (_label, binary) => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    expectOk(await ws.runScript(rendered.start, binary()), "first start");
    const pidFile = path.join(ws.moduleDir, "agentapi.pid");
    const pid = await readPid(pidFile);
    await waitTurns(ws, 1);
    const running = (await ws.processes()).sort();

    const again = await ws.runScript(rendered.start, binary());
    expectOk(again, "second start");
    expect(await readPid(pidFile)).toBe(pid);
    expect(await agentapiPids(ws)).toEqual([pid]);
    // The same AgentAPI and the same Goose, and nothing else left running.
    expect((await ws.processes()).sort()).toEqual(running);
    await ws.waitStable();
    expect(await ws.deliveries(PROMPT)).toBe(1);
    if (!ws.goose.real) expect(agentLaunches(await ws.events())).toHaveLength(1);
    // No second AgentAPI was even attempted (v0.12 would refuse it over the PID file).
    expect(await readFile(path.join(ws.moduleDir, "logs", "agentapi.log"), "utf8")).not.toMatch(
      /already running|address already in use/,
    );
  });

  it("a PID file naming a live process that is not this AgentAPI is replaced, and that process is left alone", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    const pidFile = path.join(ws.moduleDir, "agentapi.pid");
    // A recycled PID: some other live process, outside this workspace's HOME.
    const other = spawn("sleep", ["300"], { stdio: "ignore", env: { PATH: "/usr/bin:/bin" } });
    try {
      await mkdir(ws.moduleDir, { recursive: true });
      await writeFile(pidFile, `${other.pid}\n`);
      expectOk(await ws.runScript(rendered.start), "start script");
      const pid = await readPid(pidFile);
      expect(pid).not.toBe(other.pid);
      expect(await agentapiPids(ws)).toEqual([pid]);
      expect(await cmdline(other.pid!)).toEqual(["sleep", "300"]);
      await waitTurns(ws, 1);
      expect(await ws.deliveries(PROMPT)).toBe(1);
    } finally {
      other.kill("SIGKILL");
    }
  });

  // Double-only: these put a fake goose around the double on PATH, and read
  // the double's event log for what the module did with it.
  describe.skipIf(gooseUnderTest().real)("when `goose session list` fails", () => {
    /** A goose on PATH whose `session list` fails, as with a locked or newer database; everything else is the double. */
    async function brokenListGoose(ws: Workspace): Promise<string> {
      const dir = path.join(ws.home, "broken-list-bin");
      await mkdir(dir, { recursive: true });
      const script = `#!/bin/sh\nif [ "$1" = session ] && [ "$2" = list ]; then echo "Error: database is locked" >&2; exit 1; fi\nexec '${ws.goose.bin}' "$@"\n`;
      await writeFile(path.join(dir, "goose"), script, { mode: 0o755 });
      return dir;
    }

    async function coldStartThenStop(ws: Workspace, rendered: Rendered): Promise<void> {
      expectOk(await ws.runScript(rendered.start), "first start");
      await waitTurns(ws, 1);
      await stop(ws, rendered);
    }

    it("falls back to a read-only look at the database and still resumes", async () => {
      const ws = await newWorkspace();
      const rendered = await render(ws);
      await coldStartThenStop(ws, rendered);
      const [session] = await gooseSessions(ws);

      const before = (await ws.events()).length;
      const pathDirs = [
        await brokenListGoose(ws),
        path.dirname(tools.agentapiNew),
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
      ];
      expectOk(await runWithPath(ws, rendered.start, pathDirs), "second start");
      await ws.waitFor("Goose resumed", async () =>
        (await ws.events()).slice(before).find((e) => e.event === "resume"),
      );
      const events = (await ws.events()).slice(before);
      expect(events.filter((e) => e.event === "resume")).toEqual([
        expect.objectContaining({ session_id: session!.id }),
      ]);
      expect(events.some((e) => e.event === "session_created")).toBe(false);
      await ws.waitStable();
      expect(await deliveredIn(ws)).toEqual([session!.id]);
    });

    it("without sqlite3 it cannot tell, says so, and starts cold so the prompt is not lost", async () => {
      const ws = await newWorkspace();
      const rendered = await render(ws);
      await coldStartThenStop(ws, rendered);
      const [first] = await gooseSessions(ws);

      // Everything in /usr/bin except sqlite3.
      const noSqlite = path.join(ws.home, "no-sqlite-bin");
      await mkdir(noSqlite);
      for (const name of await readdir("/usr/bin")) {
        if (!name.startsWith("sqlite")) await symlink(path.join("/usr/bin", name), path.join(noSqlite, name));
      }
      const before = (await ws.events()).length;
      const started = await runWithPath(ws, rendered.start, [
        await brokenListGoose(ws),
        path.dirname(tools.agentapiNew),
        noSqlite,
      ]);
      expectOk(started, "second start");
      expect(started.stdout).toMatch(/session list/);
      expect(started.stdout).toMatch(/sqlite3/);
      await ws.waitFor("the prompt in a new session", async () => (await deliveredIn(ws)).length > 1);
      await ws.waitStable();
      expect((await launchRecord(ws)).mode).toBe("cold");
      const delivered = await deliveredIn(ws);
      expect(delivered).toHaveLength(2);
      expect(delivered[0]).toBe(first!.id);
      expect(delivered[1]).not.toBe(first!.id);
      const events = (await ws.events()).slice(before);
      expect(events.some((e) => e.event === "resume")).toBe(false);
      expect(events.filter((e) => e.event === "session_created")).toEqual([
        expect.objectContaining({ session_id: delivered[1] }),
      ]);
    });
  });

  // Double-only: a fake goose around the double stands in for one that cannot start.
  it.skipIf(gooseUnderTest().real).each([
    ["at once", false, /AgentAPI exited \(code 1\) before it was ready|Goose exited right after it started/],
    // Only once the start has seen AgentAPI answer: then only the settle watch catches this.
    ["after AgentAPI is up", true, /Goose exited right after it started/],
  ])(
    "a Goose that dies %s fails the start with AgentAPI's log, not a false success",
    async (_when, afterUp, message) => {
      const ws = await newWorkspace();
      const rendered = await render(ws);
      const dir = path.join(ws.home, "dying-goose-bin");
      await mkdir(dir, { recursive: true });
      // Written when the start's log says AgentAPI answered; the fake goose
      // waits for it (at most 60 s, so a start that never gets there still ends).
      const answered = path.join(ws.home, "agentapi-answered");
      const waitForAnswer = afterUp
        ? `i=0; while [ ! -e '${answered}' ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done\n`
        : "";
      // Probes work; the interactive session dies, as Goose does with an unusable provider.
      const script = `#!/bin/sh\nif [ "$1" = session ] && [ "$2" = list ] || [ "$1" = --version ]; then exec '${ws.goose.bin}' "$@"; fi\necho "Error: provider rejected the API key" >&2\n${waitForAnswer}exit 1\n`;
      await writeFile(path.join(dir, "goose"), script, { mode: 0o755 });
      const pathDirs = [dir, path.dirname(tools.agentapiNew), "/usr/local/bin", "/usr/bin", "/bin"];
      let marked = false;
      const result = await run("/bin/sh", ["-c", rendered.start], {
        cwd: ws.home,
        env: { ...ws.env(), PATH: pathDirs.join(":") },
        onStdout: (stdout) => {
          if (marked || !/AgentAPI \(PID \d+\) listens on port/.test(stdout)) return;
          marked = true;
          writeFileSync(answered, "");
        },
      });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message);
      // The tail of AgentAPI's log, with its diagnosis of the agent's exit.
      expect(result.stderr).toContain("agent exited with error");
      expect(await ws.processes()).toEqual([]);
    },
  );

  it("hostile prompt and folder arrive intact and execute nothing", async () => {
    const ws = await newWorkspace();
    const hostile = `it's "quoted" $(touch PWNED) \`touch PWNED2\` ; touch PWNED3 && echo \\$HOME %s héllo — 日本語 🚀`;
    const prompt = `${hostile}\nsecond line with 'single' and "double"\n\n  indented; touch PWNED3\n`;
    const folder = path.join(ws.home, `dir ${hostile}`);
    const rendered = await render(ws, { ...task(prompt), folder, session_name: "task.hostile_1" });

    expectOk(await ws.runScript(rendered.start), "start script");
    await waitTurns(ws, 1);

    expect((await stat(folder)).isDirectory()).toBe(true);
    expect(await ws.deliveries(prompt)).toBe(1);
    expect(await ws.readModuleFile("task-prompt.md")).toBe(prompt);
    const [session] = (await gooseSessions(ws)).filter((s) => s.name === "task.hostile_1");
    expect(session?.working_dir).toBe(folder);

    const pwned: string[] = [];
    for (const dir of [ws.home, repoRoot]) {
      const entries = await readdir(dir, { recursive: dir === ws.home });
      pwned.push(...entries.filter((e) => /(^|\/)PWNED/.test(String(e))).map((e) => path.join(dir, String(e))));
    }
    expect(pwned).toEqual([]);

    // Names that could reach a shell are refused when the template is applied.
    await expect(render(ws, { session_name: "x; touch PWNED" })).rejects.toThrow(/session_name/);
  });

  it.each([
    // The other binary stays on PATH, so the message is about the missing one.
    ["agentapi", "install_agentapi", () => gooseUnderTest().pathDir],
    ["goose", "install_goose", () => path.dirname(tools.agentapiNew)],
  ])("%s missing from PATH with %s = false fails with a message naming both", async (binary, variable, otherDir) => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    const result = await runWithPath(ws, rendered.start, [otherDir(), "/usr/local/bin", "/usr/bin", "/bin"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(new RegExp(`(^|[^_])${binary}\\b`));
    expect(result.stderr).toContain(variable);
    expect(await ws.processes()).toEqual([]);
    expect(await ws.status()).toBeNull();
  });

  it.each(["pre_install", "post_install"])(
    "a failing %s_script stops the start with its output and starts no AgentAPI",
    async (step) => {
      const ws = await newWorkspace();
      const rendered = await render(ws, { [`${step}_script`]: "echo boom; exit 3" });
      const result = await ws.runScript(rendered.start);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`${step}_script`);
      expect(result.stderr).toContain("boom");
      expect(await readFile(path.join(ws.moduleDir, "logs", `${step}.log`), "utf8")).toContain("boom");
      expect(await ws.status()).toBeNull();
      expect(await exists(path.join(ws.moduleDir, "agentapi.pid"))).toBe(false);
      expect(await ws.processes()).toEqual([]);
      // Goose never ran: its database holds no message (a never-run Goose has none at all).
      expect(await gooseMessages(ws.gooseDb)).toEqual([]);
      if (!ws.goose.real) expect(agentLaunches(await ws.events())).toEqual([]);
    },
  );

  it("installs the default AgentAPI and Goose from the configured URLs once, verified, and reuses them on the next start", async () => {
    const ws = await newWorkspace();
    // tools/setup.sh builds the module's default agentapi_version, so leaving
    // the variable out below installs exactly the binary this suite runs.
    const version = tools.agentapiNewVersion;
    const arch = process.arch === "arm64" ? "arm64" : "amd64";
    // Asset names as upstream publishes them (coder/agentapi release.yml;
    // aaif-goose/goose build-cli-linux.yml at v1.47.0).
    const assetPath = `/v${version}/agentapi-linux-${arch}`;
    // The tarball holds the Goose under test; ask for the version it reports,
    // so the next start finds the wanted version already installed.
    const reported = await run(ws.goose.bin, ["--version"], { env: ws.env() });
    const gooseVersion = /\d+\.\d+\.\d+/.exec(reported.stdout)?.[0];
    expect(gooseVersion, reported.stdout).toBeDefined();
    const tarballPath = `/v${gooseVersion}/goose-${arch === "arm64" ? "aarch64" : "x86_64"}-unknown-linux-gnu.tar.bz2`;
    const agentapi = await readFile(tools.agentapiNew);
    const tarball = await gooseTarball(ws.goose.bin);
    const mirror = await ReleaseMirror.start();
    mirrors.push(mirror);
    mirror.serve(assetPath, agentapi);
    mirror.serve(tarballPath, tarball);

    const rendered = await render(ws, {
      install_agentapi: true,
      agentapi_download_url: mirror.url,
      agentapi_sha256: { [arch]: sha256(agentapi) },
      install_goose: true,
      goose_version: gooseVersion,
      goose_download_url: mirror.url,
      goose_sha256: { [arch]: sha256(tarball) },
    });
    // Neither agentapi nor goose is on PATH: only the downloads can make this work.
    const systemPath = ["/usr/local/bin", "/usr/bin", "/bin"];
    const first = await runWithPath(ws, rendered.start, systemPath);
    expectOk(first, "first start");
    expect(mirror.requests).toEqual([assetPath, tarballPath]);
    expect(first.stdout).toContain("downloads: agentapi verified; goose verified\n");

    const agentapiBin = path.join(ws.moduleDir, "bin", "agentapi");
    expect((await lstat(agentapiBin)).isFile()).toBe(true);
    const versionOut = await run(agentapiBin, ["--version"]);
    expect(versionOut.stdout).toContain(version);
    const pid = await readPid(path.join(ws.moduleDir, "agentapi.pid"));
    expect(await readlink(`/proc/${pid}/exe`)).toBe(agentapiBin);

    const gooseBin = path.join(ws.home, ".local", "bin", "goose");
    // By digest: a real Goose is about 150 MB, past what a deep equality of two Buffers can walk.
    expect(sha256(await readFile(gooseBin))).toBe(sha256(await readFile(ws.goose.bin)));
    // Executable by the user's other tools too, whatever the umask.
    expect((await stat(gooseBin)).mode & 0o777).toBe(0o755);
    expect(await readdir(path.dirname(gooseBin))).toEqual(["goose"]);
    expect((await agentCommand(pid))[0]).toBe(gooseBin);
    await waitTurns(ws, 1);
    expect(await ws.deliveries(PROMPT)).toBe(1);

    await stop(ws, rendered);
    const before = mirror.requests.length;
    const second = await runWithPath(ws, rendered.start, systemPath);
    expectOk(second, "second start");
    expect(mirror.requests.slice(before)).toEqual([]);
    // Pinned, so both are hashed again before they run.
    expect(second.stdout).toContain(
      "downloads: agentapi verified (already installed); goose verified (already installed)\n",
    );
    const secondPid = await readPid(path.join(ws.moduleDir, "agentapi.pid"));
    expect(await readlink(`/proc/${secondPid}/exe`)).toBe(agentapiBin);
    // The installed Goose resumes the session.
    expect((await launchRecord(ws)).mode).toBe("warm");
    expect(await agentCommand(secondPid)).toEqual([gooseBin, "session", "--resume", "--name", SESSION, "--history"]);
    await ws.waitStable();
    expect(await ws.deliveries(PROMPT)).toBe(1);
  });
});

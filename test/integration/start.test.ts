// Integration tests of the START coder_script: rendered by `terraform apply`,
// run as `/bin/sh -c` in a throwaway HOME against real AgentAPI binaries and
// the Goose under test (the double, or a real Goose with GOOSE_BIN), counting
// how often the task prompt reaches Goose in Goose's own database.

import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { request } from "node:http";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  type GooseMessage,
  gooseMessages,
  gooseSessionExtensions,
  repoRoot,
  resourceValues,
  run,
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
  output,
  PLAIN,
  PROMPT,
  render,
  SESSION,
  setTurnMs,
  start,
  steadyProcesses,
  stop,
  task,
  WORKSPACE_ID,
  waitTurns,
} from "./scenario.js";
import { agentCommand, agentLaunches, deliveredIn, exists, gooseSessions, readPid } from "./start-scenario.js";

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

    const started = await ws.runStart(rendered);
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

  it("a plain workspace's ai_prompt: the log calls it the first prompt, its file says nothing of a task, and Goose gets it once", async () => {
    const ws = await newWorkspace();
    const prompt = "Summarise the README.";
    const rendered = await render(ws, { ...PLAIN, ai_prompt: prompt });
    const started = output(await start(ws, rendered));
    expect(started).toContain("Goose has answered the first prompt");
    expect(started).not.toContain("task prompt");
    expect(await ws.readModuleFile("first-prompt.md")).toBe(prompt);
    expect(await ws.deliveries(prompt)).toBe(1);
    await stop(ws, rendered);
  });

  // Observed with Goose 1.46.1: while it answers the task prompt it draws no
  // spinner, AgentAPI says "stable" and takes a chat message, and Goose leaves
  // it unsent in its input line. The start ends once that answer is in, and
  // sends such a message on.
  it("a chat message sent while Goose answers the task prompt reaches Goose; the start ends after the answer", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    await setTurnMs(ws, 5000);
    const starting = ws.runStart(rendered);
    await ws.waitFor("the prompt stored by Goose", async () => (await deliveredIn(ws)).length === 1);
    await ws.agentapi.waitStable();
    await ws.agentapi.post("Run the test suite.");
    const started = await starting;
    expectOk(started, "start script");
    expect(started.stdout).toContain("Goose has answered the task prompt");
    // Received once, and answered: the terminal turned its Enter into a newline
    // while Goose answered the prompt, so it needs the start's Enter.
    await ws.waitFor("Goose's answer to the message", async () => {
      const rows = await gooseMessages(ws.gooseDb);
      const asked = rows.filter((m) => m.role === "user" && m.userVisible && m.text === "Run the test suite.");
      return asked.length === 1 && rows.some((m) => m.role === "assistant" && m.id > asked[0]!.id);
    });
    await ws.waitStable();
    const replies = await gooseReplies(ws);
    expect(flat((await ws.agentapi.messages()).map((m) => m.content).join(" "))).toContain(head(replies.at(-1)));
    await stop(ws, rendered);
  });

  it("cold start with custom state_file_path and pid_file_path under HOME", async () => {
    const ws = await newWorkspace();
    const stateFile = path.join(ws.home, "persist dir", "chat state.json");
    const pidFile = path.join(ws.home, "run", "goose agentapi.pid");
    const rendered = await render(ws, { state_file_path: stateFile, pid_file_path: pidFile });

    expectOk(await ws.runStart(rendered), "start script");
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

  it("warm start after a stop resumes the session by its id, without the prompt, with the chat restored", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    expectOk(await ws.runStart(rendered), "first start");
    await waitTurns(ws, 1);
    await ws.send("Also update the changelog");
    const [session] = (await gooseSessions(ws)).filter((s) => s.name === SESSION);
    expect(session).toBeDefined();
    const replies = await gooseReplies(ws, session!.id);
    expect(replies).toHaveLength(2);
    await stop(ws, rendered);

    const before = (await ws.events()).length;
    const started = await ws.runStart(rendered);
    expectOk(started, "second start");
    expect(started.stdout).toContain("warm start");
    const record = await launchRecord(ws);
    expect(record.mode).toBe("warm");
    // The last turn was answered: nothing to carry on, so nothing is typed.
    expect(record.interrupted_turn.action, record.interrupted_turn.reason).toBe("none");
    const [pid] = await agentapiPids(ws);
    expect(pid).toBeDefined();
    const resume = ["session", "--resume", "--session-id", session!.id, "--history"];
    expect((await agentCommand(pid!)).slice(1)).toEqual(resume);

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
      expect(launches[0]!.argv.slice(1)).toEqual(resume);
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
    expectOk(await ws.runStart(rendered), "first start");
    await waitTurns(ws, 1);
    const [first] = await gooseSessions(ws);
    expect(first).toBeDefined();
    await stop(ws, rendered);
    const savedState = await readFile(stateFile, "utf8");

    const before = (await ws.events()).length;
    expectOk(await ws.runStart(rendered), "second start");
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
    const started = await ws.runStart(rendered, tools.agentapiOld);
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

  it("with a prompt, a session that exists without a user message is a cold start; the prompt reaches Goose once in total", async () => {
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
    expectOk(await ws.runStart(rendered), "first start");
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
    expectOk(await ws.runStart(rendered), "second start");
    expect((await launchRecord(ws)).mode).toBe("warm");
    const [pid] = await agentapiPids(ws);
    expect((await agentCommand(pid!)).slice(1)).toEqual([
      "session",
      "--resume",
      "--session-id",
      created!.id,
      "--history",
    ]);
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
    expectOk(await ws.runStart(rendered), "first start");
    await waitTurns(ws, 1);
    await ws.send("Remember the blue elephant");
    await stop(ws, rendered);
    const savedState = await readFile(stateFile, "utf8");
    expect(savedState).toContain("blue elephant");

    await rm(path.dirname(path.dirname(ws.gooseDb)), { recursive: true, force: true });
    const before = (await ws.events()).length;
    const started = await ws.runStart(rendered);
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
    expectOk(await ws.runStart(rendered, binary()), "first start");
    const pidFile = path.join(ws.moduleDir, "agentapi.pid");
    const pid = await readPid(pidFile);
    await waitTurns(ws, 1);
    const running = await steadyProcesses(ws);

    const again = await ws.runStart(rendered, binary());
    expectOk(again, "second start");
    expect(await readPid(pidFile)).toBe(pid);
    expect(await agentapiPids(ws)).toEqual([pid]);
    // The same AgentAPI and the same Goose, and nothing else left running.
    expect(await steadyProcesses(ws)).toEqual(running);
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
      expectOk(await ws.runStart(rendered), "start script");
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

  it("hostile prompt and folder arrive intact and execute nothing", async () => {
    const ws = await newWorkspace();
    const hostile = `it's "quoted" $(touch PWNED) \`touch PWNED2\` ; touch PWNED3 && echo \\$HOME %s héllo — 日本語 🚀`;
    const prompt = `${hostile}\nsecond line with 'single' and "double"\n\n  indented; touch PWNED3\n`;
    const folder = path.join(ws.home, `dir ${hostile}`);
    const rendered = await render(ws, { ...task(prompt), folder, session_name: "task.hostile_1" });

    expectOk(await ws.runStart(rendered), "start script");
    await waitTurns(ws, 1);

    expect((await stat(folder)).isDirectory()).toBe(true);
    expect(await ws.deliveries(prompt)).toBe(1);
    expect(await ws.readModuleFile("first-prompt.md")).toBe(prompt);
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

  // Goose goes on without a stdio extension whose command it cannot start, and
  // says so only on its screen, before its banner ("Warning: Failed to start
  // extension 'NAME' (REASON), continuing without it": load_extensions in
  // crates/goose-cli/src/session/builder.rs at v1.47.0). The start passes it on.
  it("an additional extension whose command does not exist: the start warns with its name and Goose's reason, and Goose still answers", async () => {
    const ws = await newWorkspace();
    // args is required: ExtensionConfig::Stdio has no default for it (crates/goose/src/agents/extension.rs
    // at v1.47.0), and Goose skips an entry it cannot read, saying so only in its log (config/extensions.rs).
    const broken =
      "broken:\n  type: stdio\n  name: broken\n  cmd: /nonexistent/broken-mcp-server\n  args: []\n  enabled: true\n  timeout: 30\n";
    const rendered = await render(ws, { additional_extensions: broken });

    const started = await ws.runStart(rendered);
    expectOk(started, "start script");
    const warned = started.stdout.split("\n").filter((line) => line.includes("'broken'"));
    expect(warned).toEqual([
      expect.stringMatching(
        /^goose-module: warning: Goose runs without its extension 'broken', which did not start: .*No such file or directory/,
      ),
    ]);

    await waitTurns(ws, 1);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    const before = await ws.replies();
    await ws.send("Are you still there?");
    expect(await ws.replies()).toBe(before + 1);
    // Goose ran the session without it: a failed extension is not saved with the session.
    const [saved] = await gooseSessionExtensions(ws.gooseDb);
    expect(saved).toContain("Coder");
    expect(saved).not.toContain("broken");
  });
});

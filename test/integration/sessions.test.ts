// Which Goose session a start resumes, on real AgentAPI and the Goose under
// test: a plain workspace nobody typed in, sessions that already share the
// module's name, and a home where coder/goose 3.0.1 ran before.

import { appendFile, mkdir, readdir, rename, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run, type Workspace } from "../../support/workspace/index.js";
import {
  agentapiPids,
  expectOk,
  launchRecord,
  newWorkspace,
  output,
  PLAIN,
  render,
  SESSION,
  start,
  stop,
} from "./scenario.js";
import { agentCommand, deliveredIn, gooseSessions } from "./start-scenario.js";

const setAsideFiles = async (dir: string) => (await readdir(dir)).filter((name) => name.includes("set-aside"));

/** The module's folder (scenario.ts render), made. */
async function projectFolder(ws: Workspace): Promise<string> {
  const folder = path.join(ws.home, "project");
  await mkdir(folder, { recursive: true });
  return folder;
}

/** Runs the Goose under test in `cwd` as something other than the module did (an earlier version, 3.0.1, the user), typing `input`. */
async function gooseBefore(ws: Workspace, cwd: string, args: string[], input: string): Promise<void> {
  const result = await run(ws.goose.bin, args, {
    cwd,
    env: {
      ...ws.env(),
      GOOSE_PROVIDER: ws.goose.provider ?? "anthropic",
      GOOSE_MODEL: ws.goose.model ?? "claude-sonnet-4-5",
      GOOSE_TELEMETRY_ENABLED: "false",
    },
    input,
  });
  expectOk(result, `goose ${args.join(" ")}`);
}

/** Goose processes the module ran to decide (list, export), from the double's event log: `session list`, `session export --name` ... */
function helperRuns(events: Array<Record<string, any>>): string[] {
  return events
    .filter((e) => e.event === "start" && e.argv[1] === "session" && (e.argv[2] === "list" || e.argv[2] === "export"))
    .map((e) => e.argv.slice(1, e.argv[2] === "export" ? 4 : 3).join(" "));
}

describe("an unused plain workspace restarts quietly", () => {
  it("three restarts with nobody typing: one Goose session with the module's name, nothing set aside, no word of a prompt; a message then lands in that session", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, PLAIN);
    await start(ws, rendered);
    await ws.waitStable();
    const named = await ws.sessionsNamed(SESSION);
    expect(named).toHaveLength(1);
    await stop(ws, rendered);

    for (let restart = 1; restart <= 3; restart++) {
      const started = output(await start(ws, rendered));
      await ws.waitStable();
      expect(await ws.sessionsNamed(SESSION), `restart ${restart}`).toEqual(named);
      expect(started, `restart ${restart}`).not.toMatch(/prompt/i);
      expect(started, `restart ${restart}`).not.toMatch(/set aside|moved .* to /);
      expect(await setAsideFiles(ws.moduleDir), `restart ${restart}`).toEqual([]);
      await stop(ws, rendered);
    }

    await start(ws, rendered);
    await ws.waitStable();
    await ws.send("hello after three quiet restarts");
    expect(await ws.sessionsNamed(SESSION)).toEqual(named);
    expect(await ws.deliveries("hello after three quiet restarts")).toBe(1);
    await stop(ws, rendered);
  }, 240_000);
});

describe("Goose calls before the launch", () => {
  it("a workspace's first start makes none; once the module has launched Goose, a database gone behind its back is asked about (Goose's list), and the chat Goose no longer remembers is set aside", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, PLAIN);
    const first = output(await start(ws, rendered));
    await ws.waitStable();
    expect(first).toMatch(
      /cold start: Goose has no session named "[^"]+" \[no Goose database at [^\]]+, and the module never launched Goose here\]/,
    );
    if (!ws.goose.real) expect(helperRuns(await ws.events())).toEqual([]);
    await ws.send("hello before the database moves");
    await stop(ws, rendered);

    // Goose's data folder moves away: the module has launched Goose, so a missing database is Goose's to answer for.
    const data = path.join(ws.home, ".local", "share", "goose");
    await rename(data, `${data}.moved`);
    const mark = (await ws.events()).length;
    const second = output(await start(ws, rendered));
    await ws.waitStable();
    expect(second).toMatch(/cold start: Goose has no session named "[^"]+" \[goose session list\]/);
    expect(second).toMatch(/moved .*agentapi-state\.json to /);
    if (!ws.goose.real) expect(helperRuns((await ws.events()).slice(mark))).toEqual(["session list"]);
    await stop(ws, rendered);
  }, 120_000);
});

describe("a warm start after the module's own stop asks Goose nothing while nothing changed", () => {
  const SHORTCUT = "Goose not asked (no goose session export): the last stop saw Goose leave at its prompt";

  /** A start the Goose under test has settled after, the log's text and the Goose helpers it ran (double only: from its event log). */
  async function started(ws: Workspace, rendered: Awaited<ReturnType<typeof render>>) {
    const mark = ws.goose.real ? 0 : (await ws.events()).length;
    const log = output(await start(ws, rendered));
    await ws.waitStable();
    return { log, helpers: ws.goose.real ? null : helperRuns((await ws.events()).slice(mark)) };
  }

  async function resumedId(ws: Workspace): Promise<string> {
    const [pid] = await agentapiPids(ws);
    const command = await agentCommand(pid!);
    expect(command.slice(1, 4)).toEqual(["session", "--resume", "--session-id"]);
    return command[4]!;
  }

  it("start, converse, stop, start: the second start takes Goose's answer from the stop's record, runs no session export, resumes the same session by id and the conversation goes on there", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, PLAIN);
    // The first launch makes a new session, whose id only Goose knows: the next start asks.
    await started(ws, rendered);
    await ws.send("hello from the first run");
    await stop(ws, rendered);
    const asked = await started(ws, rendered);
    expect(asked.log).toContain("asking Goose: the last launch began a new session, whose id only Goose knows");
    if (asked.helpers) expect(asked.helpers).toEqual(["session export --name"]);
    const id = await resumedId(ws);

    await ws.send("hello from the second run");
    await stop(ws, rendered);
    const quick = await started(ws, rendered);
    expect(quick.log).toContain(SHORTCUT);
    expect(quick.log).toMatch(new RegExp(`warm start: Goose has session "${SESSION}" \\(${id}\\) with \\d+ message`));
    if (quick.helpers) expect(quick.helpers).toEqual([]);
    expect(await resumedId(ws)).toBe(id);
    expect((await launchRecord(ws)).mode).toBe("warm");
    await ws.send("hello from the third run");
    expect(await deliveredIn(ws, "hello from the third run")).toEqual([id]);
    expect(await deliveredIn(ws, "hello from the second run")).toEqual([id]);
    await stop(ws, rendered);
  }, 180_000);

  it("asks Goose when its database or the chat changed behind the module's back after the stop: a newer session of the name is resumed, a touch or a rewritten chat is asked about", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, PLAIN);
    await started(ws, rendered);
    await ws.send("hello from the first run");
    await stop(ws, rendered);
    await started(ws, rendered);
    const id = await resumedId(ws);
    await stop(ws, rendered);

    // Another conversation of the module's name, written into Goose's store after the stop.
    await gooseBefore(ws, path.join(ws.home, "project"), ["session", "--name", SESSION], "behind the module's back\n");
    const newer = (await deliveredIn(ws, "behind the module's back"))[0]!;
    expect(newer).not.toBe(id);
    const afterNewer = await started(ws, rendered);
    expect(afterNewer.log).not.toContain(SHORTCUT);
    expect(afterNewer.log).toMatch(/asking Goose: \S*sessions\.db(-wal)? changed since the last stop/);
    if (afterNewer.helpers) expect(afterNewer.helpers).toEqual(["session export --name"]);
    expect(await resumedId(ws)).toBe(newer);
    await stop(ws, rendered);

    // The database touched, nothing else.
    expect(output(await start(ws, rendered))).toContain(SHORTCUT);
    await ws.waitStable();
    await stop(ws, rendered);
    const now = new Date();
    await utimes(ws.gooseDb, now, now);
    const afterTouch = await started(ws, rendered);
    expect(afterTouch.log).toMatch(/asking Goose: \S*sessions\.db changed since the last stop/);
    if (afterTouch.helpers) expect(afterTouch.helpers).toEqual(["session export --name"]);
    await stop(ws, rendered);

    // The chat changed.
    await appendFile(path.join(ws.moduleDir, "agentapi-state.json"), "\n");
    const afterChat = await started(ws, rendered);
    expect(afterChat.log).toMatch(/asking Goose: \S*agentapi-state\.json changed since the last stop/);
    if (afterChat.helpers) expect(afterChat.helpers).toEqual(["session export --name"]);
    expect(await resumedId(ws)).toBe(newer);
    await stop(ws, rendered);
  }, 240_000);
});

describe("sessions that already share the module's name", () => {
  it("resumes the one holding the conversation by its id, not the newer empty one a resume by name would take, and says so", async () => {
    const ws = await newWorkspace();
    const folder = await projectFolder(ws);
    // An earlier version of the module: a conversation, then a restart nobody typed in made another, empty, session of that name.
    await gooseBefore(ws, folder, ["session", "--name", SESSION], "Remember the blue elephant\n");
    await gooseBefore(ws, folder, ["session", "--name", SESSION], "");
    const sessions = await gooseSessions(ws);
    const conversation = sessions.find((s) => s.name === SESSION && s.message_count > 0)!;
    const empty = sessions.find((s) => s.name === SESSION && s.message_count === 0)!;
    expect(await ws.sessionsNamed(SESSION)).toEqual([empty.id, conversation.id]);
    // Goose's own answer for the name: the newer, empty one.
    const byName = await run(ws.goose.bin, ["session", "export", "--name", SESSION, "--format", "json"], {
      cwd: folder,
      env: ws.env(),
    });
    expect(JSON.parse(byName.stdout).id).toBe(empty.id);

    const rendered = await render(ws, PLAIN);
    const started = output(await start(ws, rendered));
    await ws.waitStable();
    expect(started).toContain(
      `2 Goose sessions are named "${SESSION}" (${empty.id}, ${conversation.id}); resuming ${conversation.id} by its id, the most recently active one holding messages (2); goose session --resume --name would have taken the empty ${empty.id}`,
    );
    expect(started).toMatch(/warm start: /);
    const [pid] = await agentapiPids(ws);
    expect((await agentCommand(pid!)).slice(1)).toEqual([
      "session",
      "--resume",
      "--session-id",
      conversation.id,
      "--history",
    ]);
    await ws.send("What animal did I mention?");
    expect(await deliveredIn(ws, "What animal did I mention?")).toEqual([conversation.id]);
    expect(
      (await gooseSessions(ws))
        .filter((s) => s.name === SESSION)
        .map((s) => s.id)
        .sort(),
    ).toEqual([empty.id, conversation.id].sort());
    await stop(ws, rendered);
  }, 120_000);
});

describe("the first start after coder/goose 3.0.1", () => {
  /** A home as 3.0.1 left it: ~/.goose-module with its agentapi module's scripts, the config.yaml lines Goose needs, sessions from its plain starts. */
  async function homeAfter301(ws: Workspace): Promise<void> {
    const dir = path.join(ws.home, ".goose-module");
    await mkdir(path.join(dir, "scripts"), { recursive: true });
    for (const file of ["install.sh", "install.log", "agentapi-start.log"]) await writeFile(path.join(dir, file), "");
    for (const file of ["agentapi-start.sh", "agentapi-wait-for-start.sh"])
      await writeFile(path.join(dir, "scripts", file), "#!/bin/bash\n", { mode: 0o755 });
    const config = path.join(ws.home, ".config", "goose", "config.yaml");
    await mkdir(path.dirname(config), { recursive: true });
    const provider = ws.goose.provider ?? "anthropic";
    await writeFile(config, `GOOSE_PROVIDER: ${provider}\nGOOSE_MODEL: ${ws.goose.model ?? "claude-sonnet-4-5"}\n`);
  }

  it("names the conversation 3.0.1 left and how to open it, touches no session, and says it only while the module has no session of its own", async () => {
    const ws = await newWorkspace();
    const folder = await projectFolder(ws);
    await homeAfter301(ws);
    // 3.0.1's plain starts ran a bare `goose` in the folder; the user's own named session elsewhere.
    await gooseBefore(ws, folder, [], "first 3.0.1 chat\n");
    await gooseBefore(ws, folder, [], "the last 3.0.1 chat\n");
    await gooseBefore(ws, folder, [], "");
    await gooseBefore(ws, ws.home, ["session", "--name", "mine"], "the user's own\n");
    const before = await gooseSessions(ws);
    const last = (await deliveredIn(ws, "the last 3.0.1 chat"))[0]!;
    const lastListed = before.find((s) => s.id === last)!;
    // Goose named it itself: "CLI Session", or what the model called it after the
    // first turn (upstream asks the model to name an unnamed session).
    expect(lastListed).toMatchObject({ user_set_name: false, message_count: 2 });
    const lastName = (lastListed as unknown as { name: string }).name;
    expect(lastName).not.toBe("");

    const rendered = await render(ws, PLAIN);
    const first = output(await start(ws, rendered));
    await ws.waitStable();
    const note = `coder/goose 3.x ran here before: its last conversation is Goose session ${last} "${lastName}" (2 message(s), last active ${(lastListed as unknown as { last_message_at: string }).last_message_at}); the module does not resume it as "${SESSION}", because Goose cannot rename a session and a resumed session keeps the extensions 3.x saved in it; to open it in a terminal: goose session --resume --session-id ${last}`;
    expect(first).toContain(note);
    expect(first).toMatch(/cold start: Goose has no session named/);
    const named = await ws.sessionsNamed(SESSION);
    expect(named).toHaveLength(1);
    const after = await gooseSessions(ws);
    const unchanged = (list: typeof before) =>
      list.filter((s) => s.name !== SESSION).map((s) => [s.id, s.name, s.message_count]);
    expect(unchanged(after)).toEqual(unchanged(before));
    await ws.send("hello under the new module");
    await stop(ws, rendered);

    const mark = (await ws.events()).length;
    const second = output(await start(ws, rendered));
    await ws.waitStable();
    expect(second).not.toContain("coder/goose 3.x ran here before");
    expect(second).toMatch(/warm start: /);
    expect(await ws.sessionsNamed(SESSION)).toEqual(named);
    if (!ws.goose.real) expect(helperRuns((await ws.events()).slice(mark))).toEqual(["session export --name"]);
    await stop(ws, rendered);
  }, 120_000);
});

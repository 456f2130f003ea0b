// The stop coder_script (scripts/shutdown.mjs) against real AgentAPI
// binaries, the Goose under test (the double, or a real Goose with GOOSE_BIN),
// and the stand-in for the Coder deployment that receives task log snapshots.

import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ChatMessage,
  CODER_TASK,
  CoderEndpoint,
  type EndpointAnswer,
  gooseUnderTest,
  isRunning,
  processState,
  type RecordedRequest,
  type Rendered,
  type RunResult,
  renderModule,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import { newWorkspace, setTurnMs } from "./scenario.js";

const base = {
  agent_id: "agent-1",
  goose_provider: "anthropic",
  goose_model: "claude-sonnet-4-5",
  install_goose: false,
  install_agentapi: false,
};

// The stop script's documented bounds (README, "Stop grace period"; turn and
// SIGTERM waits come from stop_turn_wait_seconds / stop_sigterm_wait_seconds),
// which the stop names in its log lines.
const SAVE_MS = 2000;
const TURN_MS = 5000;
const TERM_MS = 10000;
const HTTP_MS = 2000;
const EXIT_MS = 2000;
/** What the stop prints when Goose left by itself on `/exit`. */
const GRACEFUL = "Goose exited on /exit, and AgentAPI with it";
const SNAPSHOT_LIMIT = 64 * 1024;
const TRUNCATION_MARKER = "[...content truncated, showing the end of the message...]\n\n";

type Message = ChatMessage;

let coder: CoderEndpoint | null = null;
let foreign: ChildProcess | null = null;

// newWorkspace (scenario.ts) ends each workspace's processes after its test.
afterEach(async () => {
  await coder?.close();
  coder = null;
  if (foreign?.pid && foreign.exitCode === null && foreign.signalCode === null) foreign.kill("SIGKILL");
  foreign = null;
});

// ---- helpers ------------------------------------------------------------------------

interface Setup {
  ws: Workspace;
  rendered: Rendered;
  taskId: string | null;
}

/** A task (`prompt` set, or "" for none) renders as a task template does: task = data.coder_task.me. */
async function setup(opts: { vars?: Record<string, unknown>; prompt?: string } = {}): Promise<Setup> {
  const ws = await newWorkspace();
  const taskId = opts.prompt === undefined ? null : randomUUID();
  const coderEnv: Record<string, string> = { CODER_WORKSPACE_ID: randomUUID() };
  if (taskId) Object.assign(coderEnv, { CODER_TASK_ID: taskId, CODER_TASK_PROMPT: opts.prompt ?? "" });
  const rendered = await renderModule(
    ws.goose.vars({
      ...base,
      ...(taskId ? { task: CODER_TASK } : {}),
      folder: path.join(ws.home, "project"),
      agentapi_port: ws.port,
      enable_state_persistence: true,
      ...opts.vars,
    }),
    coderEnv,
  );
  return { ws, rendered, taskId };
}

async function start(w: Workspace, rendered: Rendered, binary = tools.agentapiNew): Promise<RunResult> {
  const result = await w.runScript(rendered.start, binary);
  expect(result.code, `start failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

async function stop(w: Workspace, rendered: Rendered, binary = tools.agentapiNew): Promise<RunResult> {
  const result = await w.runScript(rendered.stop, binary, 60_000);
  // Shown on failure and kept in the run log: the phase lines are the stop's own account.
  console.log(`stop: exit ${result.code} in ${result.ms} ms\n${result.stdout}${result.stderr}`);
  return result;
}

/** `phase <name>: <ms> ms` lines, in order. */
function phases(output: string): Array<{ name: string; ms: number }> {
  return [...output.matchAll(/^goose-module: phase (\w+): (\d+) ms$/gm)].map((m) => ({
    name: m[1] as string,
    ms: Number(m[2]),
  }));
}

/** AgentAPI's log for its most recent launch (the start script appends a `---` header per launch). */
async function agentapiLog(w: Workspace): Promise<string> {
  const text = await readFile(path.join(w.moduleDir, "logs", "agentapi.log"), "utf8");
  return text.slice(text.lastIndexOf("\n--- "));
}

async function pidOf(w: Workspace): Promise<number> {
  const text = await w.readModuleFile("agentapi.pid");
  const pid = Number(text?.trim());
  expect(pid, "agentapi.pid").toBeGreaterThan(1);
  return pid;
}

/** The state file's messages in /messages' shape (the file says `message`, the API `content`). */
async function stateMessages(w: Workspace): Promise<Message[]> {
  const text = await w.readModuleFile("agentapi-state.json");
  expect(text, "agentapi-state.json").not.toBeNull();
  const state = JSON.parse(text as string) as {
    version: number;
    messages: Array<{ id: number; role: string; message: string }>;
  };
  expect(state.version).toBe(1);
  return state.messages.map((m) => ({ id: m.id, role: m.role, content: m.message }));
}

const shape = (messages: Message[]) => messages.map(({ id, role, content }) => ({ id, role, content }));

/**
 * The graceful end of a stop: Goose, idle at its prompt, exited on the typed
 * `/exit`, and AgentAPI with it; no SIGTERM and no SIGKILL were needed, and
 * AgentAPI's log shows no shutdown signal.
 */
async function expectGracefulStop(w: Workspace, result: RunResult): Promise<void> {
  expect(result.stdout).toContain(GRACEFUL);
  expect(result.stdout).not.toContain(`did not exit within ${EXIT_MS} ms of /exit`);
  expect(result.stdout).not.toMatch(/SIGTERM|SIGKILL/);
  expect(await agentapiLog(w)).not.toContain("Received shutdown signal");
  if (!w.goose.real) {
    // The double's own account: the interactive Goose left on `/exit` with code 0, not by a signal.
    const events = await w.events();
    const interactive = events.filter(
      (e) =>
        e.event === "start" &&
        (e.argv?.[1] === "run" || e.argv?.[1] === "session") &&
        !["list", "export"].includes(e.argv?.[2]),
    );
    const pid = interactive[interactive.length - 1]?.pid;
    expect(pid, "an interactive Goose in the double's event log").toBeDefined();
    expect(events.filter((e) => e.event === "exit" && e.pid === pid)).toEqual([
      expect.objectContaining({ code: 0, reason: "/exit" }),
    ]);
  }
}

/** The stop's own lines about the snapshot, beside its phase timing. */
function snapshotLines(result: RunResult): string[] {
  return `${result.stdout}${result.stderr}`
    .split("\n")
    .filter((line) => line.includes("snapshot") && !/phase snapshot:/.test(line));
}

/** A task workspace whose stop script talks to a Coder endpoint answering `answer`. */
async function taskSetup(answer: EndpointAnswer, prompt = "") {
  const s = await setup({ prompt });
  coder = await CoderEndpoint.start(answer);
  const { token } = coder;
  s.ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: token });
  return { ...s, token, coder };
}

function expectSnapshotRequest(
  request: RecordedRequest | undefined,
  taskId: string,
  token: string,
): { messages: Message[] } {
  expect(request).toBeDefined();
  const r = request as RecordedRequest;
  expect(r.method).toBe("POST");
  expect(r.path).toBe(`/api/v2/workspaceagents/me/tasks/${taskId}/log-snapshot`);
  expect(r.query.get("format")).toBe("agentapi");
  expect(r.headers["coder-session-token"]).toBe(token);
  expect(r.headers["content-type"]).toMatch(/^application\/json/);
  return JSON.parse(r.body.toString("utf8"));
}

/** Sends a signal; false once the process is gone. */
function signalTo(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

// ---- tests --------------------------------------------------------------------------

describe("stop: the bounds these tests assume", () => {
  it("the template passes the documented turn and SIGTERM bounds by default", async () => {
    const { rendered } = await setup();
    // The rendered stop script's settings (gzip + base64 in CODER_MODULE_SETTINGS) set the turn and SIGTERM waits.
    const encoded = /^CODER_MODULE_SETTINGS='([A-Za-z0-9+/=]+)'$/m.exec(rendered.stop)?.[1];
    expect(encoded, "CODER_MODULE_SETTINGS in the stop script").toBeDefined();
    const settings = JSON.parse(gunzipSync(Buffer.from(encoded as string, "base64")).toString("utf8")) as {
      agent?: { timeouts?: Record<string, number> };
    };
    expect(settings.agent?.timeouts).toEqual({ turn_ms: TURN_MS, term_ms: TERM_MS });
  });
});

describe("stop: save, then stop", () => {
  it("sends SIGUSR1 first, then Goose exits on /exit: no SIGTERM, and the state file holds every message /messages showed", async () => {
    const { ws, rendered } = await setup();
    await start(ws, rendered);
    await ws.send("List the files in this folder.");
    await ws.send("Now explain what the Makefile does.");
    const before = await ws.messages();
    expect(before.length).toBe(5);
    const pid = await pidOf(ws);

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);

    // Order, from AgentAPI's own log: the SIGUSR1 save, confirmed, and no shutdown signal after it.
    const log = await agentapiLog(ws);
    const usr1 = log.indexOf("Received SIGUSR1");
    const saved = log.indexOf("State saved successfully", usr1);
    expect(usr1, log).toBeGreaterThan(-1);
    expect(saved, log).toBeGreaterThan(usr1);
    expect(log).not.toContain("Failed to save");
    // ... and from the stop's phase lines, one per phase with its duration: no turn ran, so one save.
    expect(phases(result.stdout).map((p) => p.name)).toEqual([
      "lock",
      "supervisor",
      "find",
      "save",
      "turn",
      "snapshot",
      "stop",
      "verify",
    ]);
    expect(result.stdout).toMatch(/save \(before stopping\): (AgentAPI logged the save|state file rewritten)/);
    expect(result.stdout).toContain("turn: agent idle at its prompt");
    // The save is confirmed before `/exit` is typed: the save line comes first.
    expect(result.stdout.indexOf("save (before stopping)")).toBeLessThan(result.stdout.indexOf(GRACEFUL));
    await expectGracefulStop(ws, result);

    expect(await stateMessages(ws)).toEqual(shape(before));
    expect(await isRunning(pid)).toBe(false);
    expect(await ws.processes()).toEqual([]);
    expect(await ws.readModuleFile("agentapi.pid")).toBeNull();

    // How long it took is bench/'s business (npm run bench), never a test's.
  });

  // Observed with Goose 1.46.1: while it answers the task prompt it draws no
  // spinner, AgentAPI says "stable" and takes a message; the terminal echoes it,
  // its Enter is lost, and it waits unsent in Goose's input line after the
  // reply, where a `/exit` typed after it would not end Goose.
  it("a message sent while Goose answers the task prompt: the stop clears it from the input line, and Goose exits on /exit", async () => {
    const { ws, rendered } = await setup({ prompt: "Fix the flaky test in ci.yml." });
    // A task prompt answered slowly enough that the message lands during it.
    await setTurnMs(ws, 6000);
    await start(ws, rendered);
    await ws.send("Run the test suite.");

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("cleared text left unsent in Goose's input line");
    await expectGracefulStop(ws, result);
    expect(await ws.processes()).toEqual([]);
  });
});

describe("stop: no state persistence", () => {
  it("persistence off: no SIGUSR1, Goose exits on /exit", async () => {
    const { ws, rendered } = await setup({ vars: { enable_state_persistence: false } });
    await start(ws, rendered);
    await ws.send("hello");
    const pid = await pidOf(ws);

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("save skipped: state persistence is off (enable_state_persistence is false)");
    expect(phases(result.stdout).map((p) => p.name)).toEqual([
      "lock",
      "supervisor",
      "find",
      "save",
      "turn",
      "snapshot",
      "stop",
      "verify",
    ]);
    await expectGracefulStop(ws, result);
    const log = await agentapiLog(ws);
    expect(log).not.toContain("SIGUSR1");
    expect(log).not.toContain("State saved successfully");
    expect(await isRunning(pid)).toBe(false);
    expect(await ws.processes()).toEqual([]);
    expect(await ws.readModuleFile("agentapi.pid")).toBeNull();
    expect(await ws.readModuleFile("agentapi-state.json")).toBeNull();
  });

  it(`AgentAPI below 0.12.0 (${"$"}AGENTAPI_BIN_OLD): no SIGUSR1, Goose exits on /exit`, async () => {
    const { ws, rendered } = await setup();
    await start(ws, rendered, tools.agentapiOld);
    await ws.send("hello");
    const pid = await pidOf(ws); // written by the start script: this AgentAPI has no --pid-file

    const result = await stop(ws, rendered, tools.agentapiOld);
    expect(result.code).toBe(0);
    // 0.11.8 would ignore SIGUSR1 silently, so its log cannot prove the signal was not sent;
    // the stop's own decision, read from the start script's launch record, does.
    expect(result.stdout).toContain(
      `save skipped: state persistence is off (agentapi ${tools.agentapiOldVersion} < 0.12.0)`,
    );
    await expectGracefulStop(ws, result);
    expect(await isRunning(pid)).toBe(false);
    expect(await ws.processes()).toEqual([]);
    // 0.11.8 does not remove a PID file; the stop script does.
    expect(await ws.readModuleFile("agentapi.pid")).toBeNull();
    expect(await ws.readModuleFile("agentapi-state.json")).toBeNull();
  });
});

describe("stop: a PID file that does not name this AgentAPI", () => {
  // AgentAPI keeps running in each case: its log proves it got no signal. The
  // supervisor, whose autosave would signal it too, is off.
  async function startedWorkspace() {
    const s = await setup({ vars: { supervise: false } });
    await start(s.ws, s.rendered);
    await s.ws.waitStable();
    return { ...s, agentapi: await pidOf(s.ws) };
  }

  async function expectUntouched(w: Workspace, agentapi: number) {
    expect(await isRunning(agentapi)).toBe(true);
    const log = await agentapiLog(w);
    expect(log).not.toContain("SIGUSR1");
    expect(log).not.toContain("Received shutdown signal");
    expect(await w.status()).toBe("stable");
  }

  it("missing PID file: logged, no signal, exit 0", async () => {
    const { ws, rendered, agentapi } = await startedWorkspace();
    await rm(path.join(ws.moduleDir, "agentapi.pid"));

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/no PID in \S+agentapi\.pid; nothing to signal/);
    expect(result.stdout).toContain("save skipped: AgentAPI is not running");
    await expectUntouched(ws, agentapi);
  });

  it("dead PID: logged, no signal, exit 0", async () => {
    const { ws, rendered, agentapi } = await startedWorkspace();
    const gone = spawn("true");
    await new Promise((resolve) => gone.once("exit", resolve));
    const dead = gone.pid as number;
    expect(await isRunning(dead)).toBe(false);
    await writeFile(path.join(ws.moduleDir, "agentapi.pid"), `${dead}\n`);

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`PID ${dead} from`);
    expect(result.stdout).toContain("is not running; nothing to signal");
    await expectUntouched(ws, agentapi);
  });

  it("a PID file naming another live process: it survives untouched, exit 0", async () => {
    const { ws, rendered, agentapi } = await startedWorkspace();
    // Not under the workspace's HOME, so ws.cleanup() would not kill it either.
    foreign = spawn("sleep", ["300"], { stdio: "ignore" });
    await new Promise((resolve) => foreign?.once("spawn", resolve));
    const sleeper = foreign.pid as number;
    await writeFile(path.join(ws.moduleDir, "agentapi.pid"), `${sleeper}\n`);

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`PID ${sleeper} from`);
    expect(result.stdout).toContain("is not this AgentAPI (its command line differs); it is left alone");
    // SIGUSR1 and SIGTERM would both kill sleep; SIGSTOP would show as state T.
    expect(await isRunning(sleeper)).toBe(true);
    expect(await processState(sleeper)).toBe("S");
    expect(foreign.exitCode).toBeNull();
    expect(foreign.signalCode).toBeNull();
    expect(await ws.readModuleFile("agentapi.pid")).toBe(`${sleeper}\n`);
    await expectUntouched(ws, agentapi);
  });
});

describe("stop: task log snapshot", () => {
  const prompt = "Fix the flaky test in ci.yml.";

  it("normal conversation: POSTs the messages with the agent token", async () => {
    const { ws, rendered, taskId, token, coder } = await taskSetup(204, prompt);
    await start(ws, rendered);
    await ws.send("Run the test suite.");
    const before = await ws.messages();

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(coder.requests).toHaveLength(1);
    const body = expectSnapshotRequest(coder.requests[0], taskId as string, token);
    expect(body.messages).toEqual(before);
    expect(result.stdout).toContain(`snapshot: posted ${before.length} message(s)`);
    // The snapshot is taken while Goose still runs, and the stop then ends it gracefully.
    expect(result.stdout.indexOf("snapshot: posted")).toBeLessThan(result.stdout.indexOf(GRACEFUL));
    await expectGracefulStop(ws, result);
    expect(await ws.processes()).toEqual([]);
  });

  it("more than 10 messages: only the last 10 are posted", async () => {
    const { ws, rendered, taskId, token, coder } = await taskSetup(204, prompt);
    await start(ws, rendered);
    for (let i = 1; i <= 6; i++) await ws.send(`Step ${i}: keep going.`);
    const before = await ws.messages();
    expect(before.length).toBeGreaterThan(10);

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    const body = expectSnapshotRequest(coder.requests[0], taskId as string, token);
    expect(body.messages).toEqual(before.slice(-10));
    expect(body.messages[0]?.id).toBe(before.length - 10);
    // The state file still holds all of them.
    expect(await stateMessages(ws)).toEqual(shape(before));
  });

  // Double-only: the double's GOOSE_DOUBLE_REPLY_LINES makes the huge reply; a
  // real Goose answers with the model stub's short replies.
  it.skipIf(gooseUnderTest().real)(
    "one huge message: the payload fits 64 KiB and ends with the message's tail",
    async () => {
      // No prompt here: one turn, whose reply is about 72 KB of screen text.
      const { ws, rendered, taskId, token, coder } = await taskSetup(204);
      ws.setEnv({ GOOSE_DOUBLE_REPLY_LINES: "900" });
      await start(ws, rendered);
      await ws.send("Print the whole build log.");
      const before = await ws.messages();
      const last = before[before.length - 1] as Message;
      expect(last.role).toBe("agent");
      expect(last.content).toContain("detail line 00900/00900");
      expect(Buffer.byteLength(JSON.stringify({ messages: [last] }))).toBeGreaterThan(SNAPSHOT_LIMIT);

      const result = await stop(ws, rendered);
      expect(result.code).toBe(0);
      const raw = coder.requests[0]?.body as Buffer;
      const body = expectSnapshotRequest(coder.requests[0], taskId as string, token);
      expect(raw.length).toBeLessThanOrEqual(SNAPSHOT_LIMIT);
      expect(raw.length).toBeGreaterThan(SNAPSHOT_LIMIT - 1024); // fitted, not gutted
      expect(body.messages).toHaveLength(1);
      const posted = body.messages[0] as Message;
      expect({ id: posted.id, role: posted.role, time: posted.time }).toEqual({
        id: last.id,
        role: last.role,
        time: last.time,
      });
      expect(posted.content.startsWith(TRUNCATION_MARKER)).toBe(true);
      const tail = posted.content.slice(TRUNCATION_MARKER.length);
      expect(tail.length).toBeGreaterThan(60_000);
      expect(last.content.endsWith(tail)).toBe(true);
      expect(result.stdout).toMatch(/snapshot: posted 1 message\(s\), \d+ bytes, last message truncated/);
    },
  );

  for (const status of [404, 500] as const) {
    it(`endpoint answering ${status}: logged, the stop still completes with exit 0`, async () => {
      const { ws, rendered, taskId, token, coder } = await taskSetup(status, prompt);
      await start(ws, rendered);
      await ws.send("Run the test suite.");
      const before = await ws.messages();

      const result = await stop(ws, rendered);
      expect(result.code).toBe(0);
      expect(coder.requests).toHaveLength(1);
      expectSnapshotRequest(coder.requests[0], taskId as string, token);
      expect(result.stdout).toContain(
        status === 404 ? "snapshot: Coder answered 404" : "snapshot: Coder answered HTTP 500",
      );
      // One line says what happened (v2.37+ has no endpoint: 404), and nothing fails.
      expect(snapshotLines(result)).toHaveLength(1);
      await expectGracefulStop(ws, result);
      expect(await stateMessages(ws)).toEqual(shape(before));
      expect(await ws.processes()).toEqual([]);
    });
  }

  it("endpoint answering 307 to another server: not followed, that server gets no request and no token, the target is logged", async () => {
    const elsewhere = await CoderEndpoint.start(204);
    try {
      const target = `${elsewhere.url}/collect?from=redirect`;
      const { ws, rendered, taskId, token, coder } = await taskSetup({ redirect: target }, prompt);
      await start(ws, rendered);
      await ws.send("Run the test suite.");
      const before = await ws.messages();

      const result = await stop(ws, rendered);
      expect(result.code).toBe(0);
      expect(coder.requests).toHaveLength(1);
      expectSnapshotRequest(coder.requests[0], taskId as string, token);
      expect(elsewhere.requests).toEqual([]);
      expect(result.stdout).toContain(
        `snapshot: posting the snapshot failed: Coder answered HTTP 307, a redirect to ${target}, which is not followed`,
      );
      await expectGracefulStop(ws, result);
      expect(await stateMessages(ws)).toEqual(shape(before));
      expect(await ws.processes()).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it("endpoint never answering: the stop completes within its bound", async () => {
    const { ws, rendered, coder } = await taskSetup("never", prompt);
    await start(ws, rendered);
    await ws.send("Run the test suite.");
    const before = await ws.messages();

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(coder.requests).toHaveLength(1);
    expect(result.stdout).toContain("snapshot: posting the snapshot failed");
    const snapshot = phases(result.stdout).find((p) => p.name === "snapshot");
    // The request was given up on at the bound, not answered late.
    expect(snapshot?.ms).toBeGreaterThanOrEqual(HTTP_MS - 100);
    // A snapshot that never lands does not keep Goose from its graceful exit.
    await expectGracefulStop(ws, result);
    expect(await stateMessages(ws)).toEqual(shape(before));
    expect(await ws.processes()).toEqual([]);
  });

  it("not a task: no POST at all", async () => {
    const s = await setup();
    coder = await CoderEndpoint.start(204);
    s.ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: "agent-token" });
    await start(s.ws, s.rendered);
    await s.ws.send("hello");

    const result = await stop(s.ws, s.rendered);
    expect(result.code).toBe(0);
    expect(snapshotLines(result)).toEqual([
      expect.stringContaining("snapshot skipped: this workspace is not a Coder task"),
    ]);
    expect(coder.requests).toEqual([]);
    expect(await s.ws.processes()).toEqual([]);
  });
});

describe("stop: a hung AgentAPI", () => {
  it("ignores SIGTERM (stopped with SIGSTOP): the bound holds, SIGKILL follows, no orphan Goose", async () => {
    const { ws, rendered } = await setup();
    await start(ws, rendered);
    await ws.send("hello");
    const agentapi = await pidOf(ws);
    // The interactive Goose under AgentAPI (and anything it started): every other process of this
    // workspace, now that the start script's probes have exited.
    const goose = (await ws.processes()).filter((pid) => pid !== agentapi);
    expect(goose.length).toBeGreaterThan(0);
    for (const pid of goose) expect(await isRunning(pid)).toBe(true);

    // A stopped process handles neither SIGUSR1 nor SIGTERM, nor HTTP; only SIGKILL ends it.
    process.kill(agentapi, "SIGSTOP");
    await ws.waitFor("AgentAPI stopped", async () => (await processState(agentapi)) === "T", 5000);

    const result = await stop(ws, rendered);
    // A hung AgentAPI never saved this session's chat: the stop says so and fails.
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("chat history is lost");
    expect(phases(result.stdout).map((p) => p.name)).toEqual([
      "lock",
      "supervisor",
      "find",
      "save",
      "turn",
      "snapshot",
      "stop",
      "verify",
    ]);
    const byName = Object.fromEntries(phases(result.stdout).map((p) => [p.name, p.ms]));
    expect(result.stdout).toContain(`no confirmation within ${SAVE_MS} ms`);
    // Its /status does not answer: no turn to wait for, and no `/exit` to type.
    expect(result.stdout).toContain("turn: status unavailable");
    expect(result.stdout).toContain("Goose is not idle at its prompt; sending SIGTERM");
    expect(result.stdout).not.toContain(GRACEFUL);
    expect(result.stdout).toContain(`did not exit within ${TERM_MS} ms of SIGTERM; sent SIGKILL`);
    expect(byName.stop).toBeGreaterThanOrEqual(TERM_MS);
    expect(await isRunning(agentapi)).toBe(false);
    for (const pid of goose) expect(await isRunning(pid)).toBe(false);
    expect(await ws.processes()).toEqual([]);
    expect(await ws.readModuleFile("agentapi.pid")).toBeNull();
  });
});

// The README's stated budget for a whole stop with the template's defaults
// ("Stop grace period"), and the margin this hang check allows on top of it
// for starting the runtime on a loaded machine. Not a speed test.
const BUDGET_MS = 30_000;
const MARGIN_MS = 10_000;

describe("stop: the whole stop within its budget", () => {
  /** A task workspace whose Coder never answers, its supervisor running, and Goose in the middle of a long turn. */
  async function busyTask() {
    const { ws, rendered } = await taskSetup("never", "Fix the flaky test in ci.yml.");
    ws.setEnv({ GOOSE_DOUBLE_TURN_MS: "200" });
    await start(ws, rendered);
    await ws.waitFor("the prompt answered", async () => (await ws.replies()) >= 1);
    await ws.waitStable();
    const file = path.join(ws.home, "turn-ms");
    await writeFile(file, "600000\n");
    ws.setEnv({ GOOSE_DOUBLE_TURN_MS_FILE: file });
    await ws.agentapi.post("A long piece of work.");
    await ws.waitFor("the turn running", async () => (await ws.status()) === "running");
    return { ws, rendered, agentapi: await pidOf(ws) };
  }

  async function expectAllStopped(w: Workspace, result: RunResult): Promise<void> {
    expect(result.ms, `the stop took ${result.ms} ms`).toBeLessThan(BUDGET_MS + MARGIN_MS);
    // The supervisor's runtime may take a moment to finish exiting after it stood down.
    await w.waitFor("nothing left running", async () => (await w.processes()).length === 0, 5000);
    expect(await w.readModuleFile("agentapi.pid")).toBeNull();
    expect(await w.readModuleFile("supervisor.pid")).toBeNull();
  }

  // Double-only: the turn's length is a knob of the double.
  it.skipIf(gooseUnderTest().real)(
    "AgentAPI stops answering in the middle of a turn (SIGSTOP): the stop ends inside the budget, with everything stopped",
    async () => {
      const { ws, rendered, agentapi } = await busyTask();
      process.kill(agentapi, "SIGSTOP");
      await ws.waitFor("AgentAPI stopped", async () => (await processState(agentapi)) === "T", 5000);

      const result = await stop(ws, rendered);
      expect(result.stdout).toMatch(/supervisor \(PID \d+\) stood down/);
      expect(result.stdout).toContain("turn: status unavailable");
      expect(result.stdout).toContain("snapshot: skipped: AgentAPI /messages failed");
      expect(result.stdout).toMatch(/sent SIGKILL/);
      await expectAllStopped(ws, result);
    },
  );

  // Double-only, as above. AgentAPI answers, but only now and then: it is
  // frozen (SIGSTOP) most of the time and runs in short bursts, so every
  // request takes most of a second, and every step of the stop meets it. The
  // bursts are the fault being injected, not a wait for anything.
  it.skipIf(gooseUnderTest().real)(
    "AgentAPI answering slowly at every step: the stop still ends inside the budget, with everything stopped",
    async () => {
      const { ws, rendered, agentapi } = await busyTask();
      // The supervisor hangs too: the stand-down waits out its bound, then SIGKILL.
      const supervisor = Number((await ws.readModuleFile("supervisor.pid"))?.trim());
      process.kill(supervisor, "SIGSTOP");
      let stopping = true;
      const throttle = (async () => {
        while (stopping) {
          if (!signalTo(agentapi, "SIGSTOP")) break;
          await delay(700);
          if (!signalTo(agentapi, "SIGCONT")) break;
          await delay(60);
        }
        signalTo(agentapi, "SIGCONT");
      })();
      let result: RunResult;
      try {
        result = await stop(ws, rendered);
      } finally {
        stopping = false;
        await throttle;
      }
      expect(result.stdout).toMatch(
        /the supervisor \(PID \d+\) did not stand down within \d+ ms of SIGTERM; sent SIGKILL/,
      );
      await expectAllStopped(ws, result);
    },
  );
});

describe("stop: restarts", () => {
  // Double-only: GOOSE_DOUBLE_STARTUP_MS holds the double's prompt back, the way
  // slow extensions would; a real Goose has no such knob.
  it.skipIf(gooseUnderTest().real)(
    "right after a warm start, before AgentAPI loaded the old conversation: the conversation survives",
    async () => {
      const { ws, rendered } = await setup();
      await start(ws, rendered);
      await ws.send("First question.");
      await ws.send("Second question.");
      const first = await stop(ws, rendered);
      expect(first.code).toBe(0);
      await expectGracefulStop(ws, first);
      const saved = await stateMessages(ws);
      expect(saved.length).toBe(5);

      // Goose shows its banner but not its prompt for a minute, so AgentAPI never
      // sees it ready and never loads the saved chat; its save overwrites the file.
      ws.setEnv({ GOOSE_DOUBLE_STARTUP_MS: "60000" });
      const warm = await start(ws, rendered);
      expect(warm.stdout).toContain("warm start");
      expect(warm.stdout).toContain("5 message(s) kept; backup at");
      const result = await stop(ws, rendered);

      expect(result.code).toBe(0);
      // Goose never got to its prompt: the stop waits out the turn bound, tries a cancel, saves
      // again, and, with no prompt to type `/exit` at, falls back to SIGTERM.
      expect(phases(result.stdout).map((p) => p.name)).toEqual([
        "lock",
        "supervisor",
        "find",
        "save",
        "turn",
        "save",
        "snapshot",
        "stop",
        "verify",
      ]);
      expect(result.stdout).toContain(`the agent was still busy after ${TURN_MS} ms and a cancel`);
      expect(result.stdout).toContain("Goose is not idle at its prompt; sending SIGTERM");
      expect(result.stdout).toContain("AgentAPI exited after SIGTERM");
      expect(result.stdout).not.toContain(GRACEFUL);
      expect(result.stdout).not.toContain("SIGKILL");
      const log = await agentapiLog(ws);
      expect(log).toContain("State saved successfully"); // the near-empty overwrite happened ...
      expect(result.stdout).toMatch(
        /warning: the state file holds [01] message\(s\), fewer than the 5 it held at start; restored \S+agentapi-state\.json from \S+agentapi-state\.json\.bak/,
      );
      expect(await stateMessages(ws)).toEqual(saved); // ... and was undone
      expect(await ws.processes()).toEqual([]);
    },
  );

  it("start, converse, stop, start: /messages after the restart equals the one before the stop", async () => {
    const { ws, rendered } = await setup();
    await start(ws, rendered);
    await ws.send("What is in the README?");
    await ws.send("Summarise it in one line.");
    const before = await ws.messages();
    const stopped = await stop(ws, rendered);
    expect(stopped.code).toBe(0);
    await expectGracefulStop(ws, stopped);
    expect(await ws.processes()).toEqual([]);

    const warm = await start(ws, rendered);
    expect(warm.stdout).toContain("warm start");
    // AgentAPI loads the saved chat once Goose's prompt is up.
    const after = await ws.waitFor(
      "the restored conversation",
      async () => {
        const now = await ws.messages().catch(() => []);
        return now.length >= before.length ? now : null;
      },
      30_000,
    );
    expect(shape(after)).toEqual(shape(before));
    await ws.waitStable();
    expect(shape(await ws.messages())).toEqual(shape(before));
  });
});

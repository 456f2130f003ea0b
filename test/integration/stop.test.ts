// The stop coder_script (scripts/stop.cjs) against real AgentAPI
// binaries, the Goose under test (the double, or a real Goose with GOOSE_BIN),
// and the stand-in for the Coder deployment that receives task log snapshots.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_ONLY } from "../../support/vitest/skips.js";
import {
  agentSignals,
  gooseUnderTest,
  isRunning,
  processState,
  type RunResult,
  repoRoot,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import { output, waitTurns } from "./scenario.js";
import { stopPhases } from "./stop-phases.js";
import {
  agentapiLog,
  expectGracefulStop,
  GRACEFUL,
  phases,
  pidOf,
  SAVE_MS,
  setup,
  shape,
  start,
  stateMessages,
  stop,
  TERM_MS,
  TURN_MS,
  taskSetup,
} from "./stop-scenario.js";

let foreign: ChildProcess | null = null;

afterEach(() => {
  if (foreign?.pid && foreign.exitCode === null && foreign.signalCode === null) foreign.kill("SIGKILL");
  foreign = null;
});

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
    // Without the supervisor, whose autosave at the end of each turn would leave the stop nothing to save.
    const { ws, rendered } = await setup({ vars: { supervise: false } });
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
    expect(phases(result.stdout).map((p) => p.name)).toEqual(stopPhases());
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

  // Text waits unsent in Goose's input line: typed without Enter in the CLI
  // app, or a chat message sent while Goose answered a task prompt that took
  // longer than the start waits (observed with Goose 1.46.1). A `/exit` typed
  // after it would be appended to it, and Goose would not exit.
  it("text left unsent in Goose's input line: the stop clears it, and Goose exits on /exit", async () => {
    const { ws, rendered } = await setup({ prompt: "Fix the flaky test in ci.yml." });
    await start(ws, rendered);
    await waitTurns(ws, 1);
    await ws.agentapi.post("Run the test suite.", "raw");
    await ws.agentapi.waitFor("the text in the input line", async () =>
      (await ws.agentapi.screen()).includes("> Run the test suite."),
    );

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
    expect(phases(result.stdout).map((p) => p.name)).toEqual(stopPhases());
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

describe("stop: AgentAPI ends before answering the request that carried /exit", () => {
  // AgentAPI 0.11.8 can end with Goose before it answers that request (the
  // race is in cmd/server/server.go, coder/agentapi @ v0.11.8); the stand-in
  // (support/workspace/agentapi-standin.mjs) does so every time.

  /** The stand-in as the workspace's AgentAPI: running on its port, named by its PID file. */
  async function standinAgentapi(env: Record<string, string> = {}) {
    const { ws, rendered } = await setup({ vars: { supervise: false } });
    await mkdir(ws.moduleDir, { recursive: true });
    const requests = path.join(ws.home, "standin-requests.jsonl");
    const standin = spawn(
      process.execPath,
      [path.join(repoRoot, "support/workspace/agentapi-standin.mjs"), "server", "--port", String(ws.port)],
      {
        argv0: "agentapi",
        env: { ...ws.env(), ...env, STANDIN_REQUEST_LOG: requests },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    await new Promise<void>((resolve, reject) => {
      standin.once("error", reject);
      standin.stdout?.on("data", (chunk: Buffer) => chunk.toString().includes("listening") && resolve());
    });
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      standin.once("exit", (code, signalName) => resolve(signalName ?? code)),
    );
    await writeFile(path.join(ws.moduleDir, "agentapi.pid"), `${standin.pid}\n`);
    /** What was typed into it (POST /message bodies), and, once it has gone, its exit code or the signal that ended it. */
    const outcome = async () => ({
      typed: (await readFile(requests, "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .filter((r) => r.method === "POST")
        .map((r) => JSON.parse(r.body)),
      exit: await exited,
    });
    return { ws, rendered, outcome };
  }

  it("the stop reads the dropped connection as Goose's exit: nothing signalled, exit 0", async () => {
    const { ws, rendered, outcome } = await standinAgentapi();
    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    // It got /exit, closed that request unanswered and left by itself, with code 0, not by a signal.
    expect(await outcome()).toEqual({ typed: [{ type: "raw", content: "/exit\r" }], exit: 0 });
    expect(result.stdout).toContain(GRACEFUL);
    expect(result.stdout).toContain("without answering");
    expect(agentSignals(output(result))).toEqual([]);
    expect(output(result)).not.toMatch(/failed/);
    expect(await ws.readModuleFile("agentapi.pid")).toBeNull();
  });

  it("AgentAPI gone at an earlier request of the exit step (the Ctrl+C that clears the input line): nothing signalled, the log says so", async () => {
    const { ws, rendered, outcome } = await standinAgentapi({ STANDIN_LEAVE_ON: "ctrl-c" });
    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(await outcome()).toEqual({ typed: [{ type: "raw", content: "\u0003" }], exit: 0 });
    expect(result.stdout).toContain(
      "AgentAPI closed the connection of the Ctrl+C that clears Goose's input line without answering (socket hang up)",
    );
    expect(agentSignals(output(result))).toEqual([]);
    expect(output(result)).not.toMatch(/failed/);
    expect(await ws.readModuleFile("agentapi.pid")).toBeNull();
  });
});

describe("stop: a hung AgentAPI", () => {
  it("ignores SIGTERM (stopped with SIGSTOP): the bound holds, SIGKILL follows, no orphan Goose", async () => {
    // No supervisor: its autosave at the end of the turn would have saved the chat the stop cannot.
    const { ws, rendered } = await setup({ vars: { supervise: false } });
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
    expect(phases(result.stdout).map((p) => p.name)).toEqual(stopPhases());
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
  it("AgentAPI stops answering in the middle of a turn (SIGSTOP): the stop ends inside the budget, with everything stopped", async ({
    skip,
  }) => {
    skip(gooseUnderTest().real, DOUBLE_ONLY);
    const { ws, rendered, agentapi } = await busyTask();
    process.kill(agentapi, "SIGSTOP");
    await ws.waitFor("AgentAPI stopped", async () => (await processState(agentapi)) === "T", 5000);

    const result = await stop(ws, rendered);
    expect(result.stdout).toMatch(/supervisor \(PID \d+\) stood down/);
    expect(result.stdout).toContain("turn: status unavailable");
    expect(result.stdout).toContain("snapshot: skipped: AgentAPI /messages failed");
    expect(result.stdout).toMatch(/sent SIGKILL/);
    await expectAllStopped(ws, result);
  });

  // Double-only, as above. AgentAPI answers, but only now and then: it is
  // frozen (SIGSTOP) most of the time and runs in short bursts, so every
  // request takes most of a second, and every step of the stop meets it. The
  // bursts are the fault being injected, not a wait for anything.
  it("AgentAPI answering slowly at every step: the stop still ends inside the budget, with everything stopped", async ({
    skip,
  }) => {
    skip(gooseUnderTest().real, DOUBLE_ONLY);
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
  });
});

describe("stop: restarts", () => {
  // Double-only: GOOSE_DOUBLE_STARTUP_MS holds the double's prompt back, the way
  // slow extensions would; a real Goose has no such knob.
  it("right after a warm start, before AgentAPI loaded the old conversation: the conversation survives", async ({
    skip,
  }) => {
    skip(gooseUnderTest().real, DOUBLE_ONLY);
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
    // Goose never got to its prompt: the stop waits out the turn bound and tries a cancel,
    // which ends a Goose still starting (upstream Goose 1.47.0 dies of SIGINT, a ^C byte
    // included, until its session runs), and AgentAPI with it: nothing is left to signal.
    expect(phases(result.stdout).map((p) => p.name)).toEqual(stopPhases({ turnRan: true }));
    expect(result.stdout).toContain(`the agent was still busy after ${TURN_MS} ms and a cancel`);
    expect(result.stdout).toMatch(/AgentAPI \(PID \d+\) had exited by itself meanwhile, so nothing was signalled/);
    expect(result.stdout).not.toContain("sending SIGTERM");
    expect(result.stdout).not.toContain(GRACEFUL);
    expect(result.stdout).not.toContain("SIGKILL");
    const log = await agentapiLog(ws);
    expect(log).toContain("State saved successfully"); // the near-empty overwrite happened ...
    expect(result.stdout).toMatch(
      /warning: the state file holds [01] message\(s\), fewer than the 5 it held at start; restored \S+agentapi-state\.json from \S+agentapi-state\.json\.bak/,
    );
    expect(await stateMessages(ws)).toEqual(saved); // ... and was undone
    expect(await ws.processes()).toEqual([]);
  });

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

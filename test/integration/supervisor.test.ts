// The supervisor the start script leaves beside AgentAPI, against
// real AgentAPI and the Goose under test: crashes are restarted warm with the
// same session and no prompt delivery, every turn is saved as it ends, a stop
// always wins, and a Goose that cannot resume ends in a bounded give-up.

import { readFile, readlink, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childPids, gooseUnderTest, isRunning, scratchDir, type Workspace } from "../../support/workspace/index.js";
import {
  agentapiPids,
  cmdline,
  flat,
  launchRecord,
  newWorkspace,
  PROMPT,
  render,
  SESSION,
  savedState,
  start,
  stop,
  waitTurns,
} from "./scenario.js";

/**
 * Live supervisors of this workspace's module folder, read from /proc: the
 * processes whose command line, as `ps` shows it, ends with
 * `goose-module-supervisor <module folder>`.
 */
async function supervisors(ws: Workspace): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await ws.processes()) {
    const argv = await cmdline(pid);
    if (argv.slice(-2).join("\0") === `goose-module-supervisor\0${ws.moduleDir}`) found.push(pid);
  }
  return found;
}

async function supervisorLog(ws: Workspace): Promise<string> {
  return readFile(path.join(ws.moduleDir, "logs", "supervisor.log"), "utf8").catch(() => "");
}

/** Launches recorded in AgentAPI's log: the start's and every restart's. */
async function launches(ws: Workspace): Promise<number> {
  const text = await readFile(path.join(ws.moduleDir, "logs", "agentapi.log"), "utf8").catch(() => "");
  return text.split("\n").filter((line) => line.startsWith("--- ")).length;
}

/** The one AgentAPI of this workspace; fails when there are several. */
async function theAgentapi(ws: Workspace): Promise<number> {
  const pids = await agentapiPids(ws);
  expect(pids).toHaveLength(1);
  return pids[0] as number;
}

/** Goose under that AgentAPI (it runs in its own session, as AgentAPI's child). */
async function theGoose(agentapi: number): Promise<number> {
  const children = await childPids(agentapi);
  expect(children).toHaveLength(1);
  return children[0] as number;
}

const chat = async (ws: Workspace) => (await ws.messages()).map((m) => `${m.role}: ${flat(m.content)}`);
const savedChat = async (ws: Workspace) =>
  ((await savedState(ws))?.messages ?? []).map((m) => `${m.role}: ${flat(m.message)}`);
const notThePrompt = (text: string) => text !== PROMPT;

/** A started workspace whose prompt was answered and whose chat is saved up to that turn. */
async function startedAndSaved(env: Record<string, string> = {}) {
  const ws = await newWorkspace();
  ws.setEnv(env);
  const rendered = await render(ws);
  await start(ws, rendered);
  await waitTurns(ws, 1);
  await ws.send("A follow-up before anything goes wrong.");
  const shown = await chat(ws);
  // Nothing but the supervisor's SIGUSR1 saves while AgentAPI runs.
  await ws.waitFor("the chat autosaved", async () => JSON.stringify(await savedChat(ws)) === JSON.stringify(shown));
  return { ws, rendered, shown };
}

/** Waits for an AgentAPI other than `old` to answer on the port and settle; returns its PID. */
async function waitRestarted(ws: Workspace, old: number, boundMs: number): Promise<number> {
  const pid = await ws.waitFor(
    "a new AgentAPI answering on the port",
    async () => {
      const [now] = await agentapiPids(ws);
      return now !== undefined && now !== old && (await ws.status()) !== null ? now : undefined;
    },
    boundMs,
  );
  await ws.waitStable();
  return pid;
}

/** The restart was warm, on the same Goose session, and delivered nothing: no prompt, no continuation. */
async function expectResumedWithoutDelivery(ws: Workspace, sessionId: string | undefined): Promise<void> {
  expect((await launchRecord(ws)).mode).toBe("warm");
  expect(await ws.sessionsNamed(SESSION)).toEqual([sessionId]);
  expect(await ws.deliveries(PROMPT)).toBe(1);
  expect(await ws.deliveries(notThePrompt)).toBe(1);
  if (!ws.goose.real) {
    const resumes = (await ws.events()).filter((e) => e.event === "resume");
    expect(resumes.map((e) => e.session_id)).toEqual([sessionId]);
  }
}

// The README's bound for an AgentAPI answering again after a crash.
const BACK_WITHIN_MS = 10_000;
// The README's promise: a crash this soon after a turn ends loses nothing.
const CRASH_AFTER_TURN_MS = 500;

describe("crash recovery", () => {
  it("kill -9 AgentAPI while idle: a warm restart on the same session, no delivery, the chat up to the last turn", async () => {
    const { ws, rendered, shown } = await startedAndSaved();
    const [sessionId] = await ws.sessionsNamed(SESSION);
    const agentapi = await theAgentapi(ws);
    const goose = await theGoose(agentapi);

    process.kill(agentapi, "SIGKILL");
    const restarted = await waitRestarted(ws, agentapi, BACK_WITHIN_MS);

    await expectResumedWithoutDelivery(ws, sessionId);
    expect(await isRunning(goose)).toBe(false);
    await theGoose(restarted);
    await ws.waitFor("the saved chat restored", async () => (await chat(ws)).length >= shown.length);
    expect((await chat(ws)).slice(0, shown.length)).toEqual(shown);
    expect(await supervisorLog(ws)).toMatch(
      /AgentAPI \(PID \d+\) exited after \d+ s without a stop; restart 1 in 1000 ms/,
    );
    await stop(ws, rendered);
  });

  it("kill -9 Goose only: AgentAPI exits with it, and the same warm restart follows", async () => {
    const { ws, rendered, shown } = await startedAndSaved();
    const [sessionId] = await ws.sessionsNamed(SESSION);
    const agentapi = await theAgentapi(ws);

    process.kill(await theGoose(agentapi), "SIGKILL");
    await waitRestarted(ws, agentapi, BACK_WITHIN_MS);

    await expectResumedWithoutDelivery(ws, sessionId);
    await ws.waitFor("the saved chat restored", async () => (await chat(ws)).length >= shown.length);
    expect((await chat(ws)).slice(0, shown.length)).toEqual(shown);
    await stop(ws, rendered);
  });

  it("a crash right after a completed turn: the turn is in the restored chat (autosave)", async () => {
    const { ws, rendered } = await startedAndSaved();
    const agentapi = await theAgentapi(ws);
    await ws.send("The turn right before the crash.");
    const shown = await chat(ws);
    await ws.waitFor("the last turn autosaved", async () =>
      (await savedChat(ws)).some((m) => m.startsWith("user: The turn right before the crash.")),
    );

    process.kill(agentapi, "SIGKILL");
    await waitRestarted(ws, agentapi, BACK_WITHIN_MS);
    await ws.waitFor("the saved chat restored", async () => (await chat(ws)).length >= shown.length);
    expect((await chat(ws)).slice(0, shown.length)).toEqual(shown);
    expect(await ws.deliveries("The turn right before the crash.")).toBe(1);
    expect(await supervisorLog(ws)).toContain("autosave after a turn: ");
    await stop(ws, rendered);
  });

  it("a crash half a second after a turn ends: that turn is in the restored chat", async () => {
    const { ws, rendered } = await startedAndSaved();
    const agentapi = await theAgentapi(ws);
    // send returns once AgentAPI says "stable" with the reply shown: the turn has ended.
    await ws.send("The turn half a second before the crash.");
    const shown = await chat(ws);
    // The scenario itself, not a wait for anything: the crash comes this long after the turn's end.
    await new Promise((resolve) => setTimeout(resolve, CRASH_AFTER_TURN_MS));
    process.kill(agentapi, "SIGKILL");

    await waitRestarted(ws, agentapi, BACK_WITHIN_MS);
    await ws.waitFor("the saved chat restored", async () => (await chat(ws)).length >= shown.length);
    expect((await chat(ws)).slice(0, shown.length)).toEqual(shown);
    expect(await ws.deliveries("The turn half a second before the crash.")).toBe(1);
    await stop(ws, rendered);
  });

  it("/exit typed in Goose's terminal (the CLI app): the supervisor brings it back", async () => {
    const { ws, rendered } = await startedAndSaved();
    const agentapi = await theAgentapi(ws);
    await ws.agentapi.post("/exit\r", "raw");
    await waitRestarted(ws, agentapi, BACK_WITHIN_MS);
    expect((await launchRecord(ws)).mode).toBe("warm");
    expect(await ws.deliveries(PROMPT)).toBe(1);
    await stop(ws, rendered);
  });
});

describe("the stop always wins", () => {
  it("the stop script while the supervisor watches: it stands down first, nothing restarts, nothing remains", async () => {
    const { ws, rendered } = await startedAndSaved();
    const [supervisor] = await supervisors(ws);
    expect(supervisor).toBeDefined();

    const stopped = await stop(ws, rendered);
    expect(stopped.stdout).toContain(`supervisor (PID ${supervisor}) stood down`);
    // The stand-down comes before anything is done to AgentAPI.
    expect(stopped.stdout.indexOf("stood down")).toBeLessThan(stopped.stdout.indexOf("phase save"));
    expect(await ws.processes()).toEqual([]);
    expect(await launches(ws)).toBe(1);
    expect(await supervisorLog(ws)).toMatch(/stood down: the stop script asked/);
    expect(await supervisorLog(ws)).not.toMatch(/restart \d+ in/);
    expect(await ws.readModuleFile("supervisor.pid")).toBeNull();
  });

  it("two starts: one supervisor, a POSIX sh rather than a JavaScript runtime", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    await start(ws, rendered);
    const first = await supervisors(ws);
    expect(first).toHaveLength(1);
    // What stays for the workspace's life is the system's sh (proc(5): /proc/<pid>/exe).
    expect(await readlink(`/proc/${first[0]}/exe`)).toBe(await realpath("/bin/sh"));
    await start(ws, rendered);
    expect(await supervisors(ws)).toEqual(first);
    await stop(ws, rendered);
  });

  it("a start while the supervisor runs and AgentAPI is down: no second supervisor, and the first adopts the new AgentAPI", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    await start(ws, rendered);
    const [supervisor] = (await supervisors(ws)) as [number];
    // Paused, it cannot restart AgentAPI before the start does; it still runs.
    process.kill(supervisor, "SIGSTOP");
    process.kill(await theAgentapi(ws), "SIGKILL");
    await ws.waitFor("AgentAPI gone", async () => (await agentapiPids(ws)).length === 0);

    const again = await start(ws, rendered);
    expect(again.stdout).toContain(`the supervisor (PID ${supervisor}) already watches AgentAPI`);
    const launched = await theAgentapi(ws);
    process.kill(supervisor, "SIGCONT");
    await ws.waitFor("the supervisor watching the new AgentAPI", async () =>
      (await supervisorLog(ws)).includes(`watching AgentAPI (PID ${launched})`),
    );
    expect(await supervisors(ws)).toEqual([supervisor]);
    expect(await agentapiPids(ws)).toEqual([launched]);
    expect(await launches(ws)).toBe(2);
    await stop(ws, rendered);
  });

  it("a start after a stop: a new supervisor, and the old one is gone", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    await start(ws, rendered);
    const [first] = await supervisors(ws);
    await stop(ws, rendered);
    await start(ws, rendered);
    const again = await supervisors(ws);
    expect(again).toHaveLength(1);
    expect(again).not.toContain(first);
    await stop(ws, rendered);
  });

  it("supervise = false: no supervisor", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { supervise: false });
    const started = await start(ws, rendered);
    expect(started.stdout).not.toMatch(/phase supervisor|supervisor \(PID/);
    expect(await supervisors(ws)).toEqual([]);
    expect(await ws.readModuleFile("supervisor.pid")).toBeNull();
    await stop(ws, rendered);
  });

  it("the module folder removed: the supervisor leaves", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    await start(ws, rendered);
    const [supervisor] = await supervisors(ws);
    await rm(ws.moduleDir, { recursive: true, force: true });
    await ws.waitFor("the supervisor gone", async () => !(await isRunning(supervisor as number)));
    expect(await agentapiPids(ws)).toHaveLength(1);
  });

  it("Workspace.cleanup ends the supervisor with everything else", async () => {
    const ws = await newWorkspace();
    await start(ws, await render(ws));
    expect(await supervisors(ws)).toHaveLength(1);
    expect(await ws.cleanup()).toEqual([]);
    expect(await ws.processes()).toEqual([]);
  });
});

// The failure comes from a knob of the double (test/goose-double/README.md).
describe.skipIf(gooseUnderTest().real)("a Goose that cannot resume", () => {
  it("exits 1 at once on every resume: five failed restarts, then a give-up that says why, in the log and the launch record", async () => {
    // The knob reaches the double through the start's environment, which the supervisor and AgentAPI inherit.
    const refusal = path.join(await scratchDir("knob"), "resume-error");
    const { ws, shown } = await startedAndSaved({ GOOSE_DOUBLE_RESUME_ERROR_FILE: refusal });
    await writeFile(refusal, "Invalid API key for provider anthropic (HTTP 401)");
    const agentapi = await theAgentapi(ws);

    process.kill(agentapi, "SIGKILL");
    const log = await ws.waitFor(
      "the supervisor's give-up",
      async () => {
        const text = await supervisorLog(ws);
        return text.includes("gave up:") ? text : undefined;
      },
      120_000,
    );
    expect(log).toMatch(/gave up: 5 restarts failed within 10 minutes/);
    expect(log).toContain("Invalid API key for provider anthropic (HTTP 401)");
    expect(log.match(/restart \d failed: /g)).toHaveLength(5);
    expect(log).toMatch(/restart 1 in 1000 ms[\s\S]*restart 2 in 2000 ms[\s\S]*restart 5 in 16000 ms/);
    const record = (await launchRecord(ws)) as unknown as { supervisor?: { reason: string } };
    expect(record.supervisor?.reason).toMatch(/^5 restarts failed within 10 minutes.*Invalid API key/);
    await ws.waitFor("nothing left running", async () => (await ws.processes()).length === 0, 20_000);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    // Each failed AgentAPI wrote an almost empty chat over the saved one; each time it was put back.
    expect(await savedChat(ws)).toEqual(shown);
  });
});

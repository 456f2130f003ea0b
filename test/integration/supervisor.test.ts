// The supervisor the start script leaves beside AgentAPI, against
// real AgentAPI and the Goose under test: crashes are restarted warm with the
// same session and no prompt delivery, every turn is saved as it ends, a stop
// always wins, and a Goose that cannot resume ends in a bounded give-up.

import { readFile, readlink, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DOUBLE_ONLY, skipAllFor } from "../../support/vitest/skips.js";
import { childPids, gooseUnderTest, isRunning, scratchDir, type Workspace } from "../../support/workspace/index.js";
import {
  agentapiPids,
  flat,
  gaveUpReason,
  launchRecord,
  PROMPT,
  SESSION,
  savedState,
  start,
  startNew,
  stop,
  supervisorLog,
  supervisors,
  theAgentapi,
  waitGiveUp,
  waitNoProcesses,
  waitTurns,
} from "./scenario.js";

/** Launches recorded in AgentAPI's log: the start's and every restart's. */
async function launches(ws: Workspace): Promise<number> {
  const text = await readFile(path.join(ws.moduleDir, "logs", "agentapi.log"), "utf8").catch(() => "");
  return text.split("\n").filter((line) => line.startsWith("--- ")).length;
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

/** A started workspace whose prompt was answered and whose chat is saved up to that turn. */
async function startedAndSaved(env: Record<string, string> = {}) {
  const { ws, rendered } = await startNew({}, env);
  await waitTurns(ws, 1);
  await ws.send("A follow-up before anything goes wrong.");
  const shown = await chat(ws);
  // Nothing but the supervisor's SIGUSR1 saves while AgentAPI runs.
  await ws.waitFor("the chat autosaved", async () => JSON.stringify(await savedChat(ws)) === JSON.stringify(shown));
  return { ws, rendered, shown };
}

/** A new AgentAPI, not `old`, answering within the README's 10 s bound after a crash, and settled. */
async function restarted(ws: Workspace, old: number): Promise<number> {
  const back = async () => {
    const [now] = await agentapiPids(ws);
    return now !== undefined && now !== old && (await ws.status()) !== null ? now : undefined;
  };
  const pid = await ws.waitFor("a new AgentAPI answering on the port", back, 10_000);
  await ws.waitStable();
  return pid;
}

const autosaved = (ws: Workspace, turn: string) =>
  ws.waitFor("the last turn autosaved", async () => (await savedChat(ws)).some((m) => m.startsWith(`user: ${turn}`)));
// The README's promise: a crash this soon after a turn ends loses nothing. The
// scenario itself, not a wait for anything (send returns once the turn has ended).
const halfASecond = () => new Promise((resolve) => setTimeout(resolve, 500));

describe("crash recovery", () => {
  it.each([
    ["AgentAPI while idle", { goose: false }],
    ["Goose only (AgentAPI exits with it)", { goose: true }],
    ["AgentAPI once the turn before is autosaved", { turn: "The turn right before the crash.", settle: autosaved }],
    ["AgentAPI half a second after a turn ends", { turn: "The turn half a second before.", settle: halfASecond }],
  ] as Array<[string, { goose?: boolean; turn?: string; settle?: typeof autosaved }]>)(
    "kill -9 %s: a warm restart on the same session, no delivery, the chat restored up to the last turn",
    async (_, c) => {
      const { ws, rendered } = await startedAndSaved();
      const [sessionId] = await ws.sessionsNamed(SESSION);
      const agentapi = await theAgentapi(ws);
      const goose = await theGoose(agentapi);
      if (c.turn) await ws.send(c.turn);
      const shown = await chat(ws);
      await c.settle?.(ws, c.turn as string);

      process.kill(c.goose ? goose : agentapi, "SIGKILL");
      const now = await restarted(ws, agentapi);
      expect((await launchRecord(ws)).mode).toBe("warm");
      expect(await ws.sessionsNamed(SESSION)).toEqual([sessionId]);
      expect(await ws.deliveries(PROMPT)).toBe(1);
      expect(await ws.deliveries((text) => text !== PROMPT)).toBe(c.turn ? 2 : 1);
      if (c.turn) expect(await ws.deliveries(c.turn)).toBe(1);
      if (!ws.goose.real) {
        const resumes = (await ws.events()).filter((e) => e.event === "resume");
        expect(resumes.map((e) => e.session_id)).toEqual([sessionId]);
      }
      expect(await isRunning(goose)).toBe(false);
      await theGoose(now);
      await ws.waitFor("the saved chat restored", async () => (await chat(ws)).length >= shown.length);
      expect((await chat(ws)).slice(0, shown.length)).toEqual(shown);
      const log = await supervisorLog(ws);
      expect(log).toMatch(/AgentAPI \(PID \d+\) exited after \d+ s without a stop; restart 1 in 1000 ms/);
      expect(log).toContain("autosave after a turn: ");
      await stop(ws, rendered);
    },
  );

  it("a process a tool call left running, detached with setsid, does not outlive Goose into the restart, and the log says so", async () => {
    const { ws, rendered } = await startedAndSaved();
    const agentapi = await theAgentapi(ws);
    const pidFile = path.join(ws.home, "left-running.pid");
    // Goose's shell tool (a `!` message) leaves a process outside AgentAPI's
    // session and process group, then ends the Goose that ran it.
    await ws.waitStable();
    await ws.agentapi.post(
      `!setsid -f sh -c 'echo $$ > ${pidFile}; exec sleep 600' > /dev/null 2>&1; kill -KILL $PPID`,
    );
    const left = Number(
      await ws.waitFor("the detached process's PID", () => readFile(pidFile, "utf8").catch(() => "")),
    );
    await restarted(ws, agentapi);
    expect(await isRunning(left)).toBe(false);
    expect(await supervisorLog(ws)).toContain(`ended what the last Goose's commands left running: PID ${left}\n`);
    await stop(ws, rendered);
  });

  it("/exit typed in Goose's terminal (the CLI app): the supervisor brings it back", async () => {
    const { ws, rendered } = await startedAndSaved();
    const agentapi = await theAgentapi(ws);
    await ws.agentapi.post("/exit\r", "raw");
    await restarted(ws, agentapi);
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
    expect(stopped.stdout.indexOf("stood down")).toBeLessThan(stopped.stdout.indexOf("phase save"));
    expect(await ws.processes()).toEqual([]);
    expect(await launches(ws)).toBe(1);
    expect(await supervisorLog(ws)).toMatch(/stood down: the stop script asked/);
    expect(await supervisorLog(ws)).not.toMatch(/restart \d+ in/);
    expect(await ws.readModuleFile("supervisor.pid")).toBeNull();
  });

  it("two starts: one supervisor, a POSIX sh; a start after a stop: a new one, the old one gone", async () => {
    const { ws, rendered } = await startNew();
    const first = await supervisors(ws);
    expect(first).toHaveLength(1);
    // What stays for the workspace's life is the system's sh (proc(5): /proc/<pid>/exe), not a JavaScript runtime.
    expect(await readlink(`/proc/${first[0]}/exe`)).toBe(await realpath("/bin/sh"));
    await start(ws, rendered);
    expect(await supervisors(ws)).toEqual(first);
    await stop(ws, rendered);
    await start(ws, rendered);
    const again = await supervisors(ws);
    expect(again).toHaveLength(1);
    expect(again).not.toContain(first[0]);
    await stop(ws, rendered);
  });

  it("a start while the supervisor runs and AgentAPI is down: no second supervisor, the first adopts the new AgentAPI", async () => {
    const { ws, rendered } = await startNew();
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

  it("supervise = false: no supervisor", async () => {
    const { ws, rendered, started } = await startNew({ supervise: false });
    expect(started.stdout).not.toMatch(/phase supervisor|supervisor \(PID/);
    expect(await supervisors(ws)).toEqual([]);
    expect(await ws.readModuleFile("supervisor.pid")).toBeNull();
    await stop(ws, rendered);
  });

  it("the module folder removed: the supervisor leaves", async () => {
    const { ws } = await startNew();
    const [supervisor] = await supervisors(ws);
    await rm(ws.moduleDir, { recursive: true, force: true });
    await ws.waitFor("the supervisor gone", async () => !(await isRunning(supervisor as number)));
    expect(await agentapiPids(ws)).toHaveLength(1);
  });

  it("Workspace.cleanup ends the supervisor with everything else", async () => {
    const { ws } = await startNew();
    expect(await supervisors(ws)).toHaveLength(1);
    expect(await ws.cleanup()).toEqual([]);
    expect(await ws.processes()).toEqual([]);
  });
});

// The failure comes from a knob of the double (test/goose-double/README.md).
describe("a Goose that cannot resume", () => {
  skipAllFor(gooseUnderTest().real ? DOUBLE_ONLY : null);
  it("exits 1 at once on every resume: five failed restarts, then a give-up that says why, in the log and the give-up file", async () => {
    // The knob reaches the double through the start's environment, which the supervisor and AgentAPI inherit.
    const refusal = path.join(await scratchDir("knob"), "resume-error");
    const { ws, shown } = await startedAndSaved({ GOOSE_DOUBLE_RESUME_ERROR_FILE: refusal });
    await writeFile(refusal, "Invalid API key for provider anthropic (HTTP 401)");
    process.kill(await theAgentapi(ws), "SIGKILL");
    const log = await waitGiveUp(ws);
    expect(log).toMatch(/gave up: 5 restarts failed within 10 minutes/);
    expect(log).toContain("Invalid API key for provider anthropic (HTTP 401)");
    expect(log.match(/restart \d failed: /g)).toHaveLength(5);
    expect(log).toMatch(/restart 1 in 1000 ms[\s\S]*restart 2 in 2000 ms[\s\S]*restart 5 in 16000 ms/);
    expect(await gaveUpReason(ws)).toMatch(/^5 restarts failed within 10 minutes.*Invalid API key/);
    await waitNoProcesses(ws);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    // Each failed AgentAPI wrote an almost empty chat over the saved one; each time it was put back.
    expect(await savedChat(ws)).toEqual(shown);
  });
});

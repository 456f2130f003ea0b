import { fstatSync, writeSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { lastAgentScreen } from "../agentapi/exit-screen.js";
import { findRunningAgentapi } from "../agentapi/server.js";
import { ContainmentChanged } from "../launch/containment.js";
import { launchGoose } from "../launch/launch.js";
import { ensurePortFree, reuseRunningAgentapi } from "../launch/start-checks.js";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { exists } from "../lib/files.js";
import { Fields } from "../lib/json-fields.js";
import { log, StepError, stampLogLines, warn } from "../lib/log.js";
import { stoppedSince } from "../lifecycle/stop-request.js";
import { homeDir, type ModulePaths } from "../settings/config.js";
import { readSupervisorDocument, type SupervisorInputs } from "./document.js";
import { decideRestart, noteRunEnded, type RestartHistory } from "./restart-policy.js";
import { saveAfterTurn } from "./watch.js";

// The sh supervisor (supervisor.sh) starts this code in one of two modes and
// reads the restart mode's exit code: AgentAPI runs again, the restart failed
// (the policy decides again at once), stand down, or give up.
const RUNS_AGAIN = 0;
const FAILED = 10;
const STAND_DOWN = 20;
const GAVE_UP = 30;
// The sh supervisor's file for the reason, opened for this process (start_helper).
const REASON_FD = 3;

/** The stop's SIGTERM, forwarded by the sh supervisor: ends this process at once unless a restart is under way. */
class StandDown {
  reason: string | undefined;
  restarting = false;
  private readonly controller = new AbortController();

  constructor() {
    process.once("SIGTERM", () => {
      this.reason = "the stop script asked the supervisor to stand down";
      this.controller.abort();
      if (!this.restarting) process.exit(STAND_DOWN);
    });
  }

  /** Waits, unless told to stand down meanwhile; returns why it must stand down, if it must. */
  async sleep(ms: number): Promise<string | undefined> {
    await delay(ms, undefined, { signal: this.controller.signal }).catch(() => undefined);
    return this.reason;
  }
}

/**
 * What the restart mode keeps between its runs (each restart is a new
 * process): the policy's history, the run it started, and what Goose last
 * showed when a restart failed. `since` ties it to the start that started the
 * supervisor; a file from an earlier start counts as none.
 */
export interface RestartMemory {
  since: number;
  history: RestartHistory;
  run: { restarted: boolean; startedAt: number; launched: boolean };
  /** Why the last restart failed, when it did. */
  problem: string | null;
  lastScreen: string | null;
}

function memoryFile(paths: ModulePaths): string {
  return path.join(paths.dir, "supervisor-restarts.json");
}

const MAX_TIME = Number.MAX_SAFE_INTEGER;

/** The memory `text` holds, when it has the memory's shape and belongs to the start at `since`; null otherwise. */
export function parseRestartMemory(text: string, since: number): RestartMemory | null {
  try {
    const memory = Fields.of(JSON.parse(text), "supervisor-restarts.json");
    if (memory.integer("since", 0, MAX_TIME) !== since) return null;
    const run = memory.object("run");
    return {
      since,
      history: { failures: memory.object("history").integerList("failures", 0, MAX_TIME) },
      run: {
        restarted: run.boolean("restarted"),
        startedAt: run.integer("startedAt", 0, MAX_TIME),
        launched: run.boolean("launched"),
      },
      problem: memory.nullableString("problem"),
      lastScreen: memory.nullableString("lastScreen"),
    };
  } catch {
    return null;
  }
}

async function readMemory(paths: ModulePaths, since: number): Promise<RestartMemory> {
  const text = await readFile(memoryFile(paths), "utf8").catch(() => null);
  const memory = text === null ? null : parseRestartMemory(text, since);
  if (memory !== null) return memory;
  return {
    since,
    history: { failures: [] },
    run: { restarted: false, startedAt: since, launched: true },
    problem: null,
    lastScreen: null,
  };
}

/**
 * A failed restart on one line: what failed (the first line of the error,
 * without the log it goes on to quote) and what Goose showed as it exited.
 * AgentAPI does not always catch that screen before Goose is gone, so the
 * last one seen stands in, said as such.
 */
async function describeFailure(error: unknown, agentLog: string, memory: RestartMemory): Promise<string> {
  const message = error instanceof StepError ? error.message : String((error as Error)?.stack ?? error);
  const first = (message.split("\n")[0] ?? "").replace(/ Last lines of .*:$/, "");
  const screen = lastAgentScreen(await readFile(agentLog, "utf8").catch(() => ""));
  if (screen) memory.lastScreen = screen;
  if (screen) return `${first} Goose's last screen: "${screen}"`;
  return memory.lastScreen
    ? `${first} Goose's last screen at an earlier failed restart: "${memory.lastScreen}"`
    : first;
}

/** The start's launch path again, without the prompt; says what went wrong when AgentAPI and Goose did not come up. */
async function restart(doc: SupervisorInputs, standDown: StandDown, memory: RestartMemory): Promise<string | null> {
  const { config } = doc;
  standDown.restarting = true;
  try {
    if (await reuseRunningAgentapi(config.paths, config.agentapi.port)) return null;
    await ensurePortFree(config.agentapi.port);
    const { plan, launched } = await launchGoose({
      config,
      tools: doc.tools,
      gate: doc.gate,
      home: homeDir(),
      startedAt: Date.now(),
      restart: true,
      stopsSeen: doc.stops,
      abort: () => standDown.reason,
      verified: doc.containment,
    });
    if (!launched) return "the restart was withdrawn for a stop";
    log(`restarted: ${plan.decision.mode} start of Goose session "${plan.sessionName}"`);
    return null;
  } catch (error) {
    // Not a failure to retry: no later attempt may launch from changed files.
    if (error instanceof ContainmentChanged) throw error;
    return describeFailure(error, config.paths.agentapiLog, memory);
  } finally {
    standDown.restarting = false;
  }
}

/** Why the watched run ended: the sh supervisor names the AgentAPI it saw exit, if it saw one. */
async function whyEnded(doc: SupervisorInputs, watched: number | null, memory: RestartMemory): Promise<string> {
  if (memory.problem !== null) return memory.problem;
  const { port } = doc.config.agentapi;
  if (watched === null) {
    const found = await findRunningAgentapi(doc.config.paths.pidFile, port);
    return `no AgentAPI runs on port ${port} (PID file: ${found.status})`;
  }
  const seconds = Math.round((Date.now() - memory.run.startedAt) / 1000);
  return `AgentAPI (PID ${watched}) exited after ${seconds} s without a stop`;
}

/**
 * The supervisor's last word: the reason goes to the sh supervisor, which
 * records it and logs it (record_give_up). Only to a file: started some other
 * way, this process may hold anything at descriptor 3.
 */
async function giveUp(paths: ModulePaths, reason: string): Promise<number> {
  try {
    if (fstatSync(REASON_FD).isFile()) writeSync(REASON_FD, reason);
  } catch (error) {
    warn(`gave up, but could not hand the reason to the supervisor (${(error as Error).message}): ${reason}`);
  }
  await rm(memoryFile(paths), { force: true });
  return GAVE_UP;
}

/** One decision of the restart policy, and the restart it asks for; the exit code tells the sh supervisor what follows. */
export async function restartMain(watched: number | null): Promise<number> {
  stampLogLines();
  const doc = readSupervisorDocument();
  const { paths } = doc.config;
  const standDown = new StandDown();
  const memory = await readMemory(paths, doc.since);
  const ended = await whyEnded(doc, watched, memory);
  const history = noteRunEnded(memory.history, { ...memory.run, endedAt: Date.now() });
  const step = decideRestart({
    history,
    now: Date.now(),
    stopRequested: standDown.reason !== undefined || (await stoppedSince(paths.dir, doc.stops)),
    folderPresent: await exists(paths.dir),
    lastProblem: ended,
  });
  if (step.action === "stand-down") {
    log(`stood down: ${step.reason}`);
    return STAND_DOWN;
  }
  if (step.action === "give-up") return giveUp(paths, step.reason);
  log(`${ended}; restart ${step.attempt} in ${step.delayMs} ms`);
  if (await standDown.sleep(step.delayMs)) return STAND_DOWN;
  const startedAt = Date.now();
  let problem: string | null;
  try {
    problem = await restart(doc, standDown, memory);
  } catch (error) {
    if (error instanceof ContainmentChanged) return giveUp(paths, error.message);
    throw error;
  }
  if (standDown.reason) return STAND_DOWN;
  const next: RestartMemory = { ...memory, history, run: { restarted: true, startedAt, launched: !problem }, problem };
  await writeFileAtomic(memoryFile(paths), JSON.stringify(next), { mode: 0o600 });
  if (!problem) return RUNS_AGAIN;
  log(`restart ${step.attempt} failed: ${problem}`);
  return FAILED;
}

// Long enough for a turn's reply to settle into "stable" (AgentAPI waits 2 s
// of an unchanged screen); a longer turn's end is another change in Goose's
// database, and with it another helper.
const AUTOSAVE_BOUND_MS = 10_000;

/** Saves the chat at AgentAPI's next "stable", once, when persistence is on. */
export async function autosaveMain(): Promise<number> {
  stampLogLines();
  const doc = readSupervisorDocument();
  const { paths } = doc.config;
  const { port } = doc.config.agentapi;
  const found = await findRunningAgentapi(paths.pidFile, port);
  if (found.status !== "running") return 0;
  // The gate every launch of this supervisor used, so the one the launch record holds.
  if (!doc.gate.enabled) return 0;
  await saveAfterTurn({
    pid: found.pid,
    port,
    stateFile: paths.stateFile,
    agentLog: paths.agentapiLog,
    boundMs: AUTOSAVE_BOUND_MS,
  });
  return 0;
}

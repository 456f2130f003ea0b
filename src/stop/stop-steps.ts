import { findRunningAgentapi } from "../agentapi/server.js";
import { log, warn } from "../lib/log.js";
import { type EndBounds, endBounds } from "../lifecycle/agentapi-end.js";
import { acquireLifecycleLock, type LifecycleLock, type LockOutcome } from "../lifecycle/lock.js";

/**
 * The stop's steps, in order, each with its own bound in ms: the one place
 * they are written down. The steps that end AgentAPI are the shared ones
 * (lifecycle/agentapi-end.ts, EndBounds); the stop adds its own around them.
 * A stop that meets a hung AgentAPI at every step still ends within their sum,
 * plus the few milliseconds of file work between them; with the template's
 * defaults (turn 5 s, SIGTERM 10 s) that is 29 s, inside Kubernetes' default
 * 30 s grace period. A normal idle stop takes a fraction of a second.
 */
export interface StopBounds extends EndBounds {
  /** Waiting for the lifecycle lock while a start or the supervisor launches or claims (milliseconds of work). */
  lock: number;
  /** The supervisor's exit after SIGTERM; SIGKILL after it. */
  standDown: number;
  /** AgentAPI confirming the save asked for with SIGUSR1. */
  save: number;
  /** Saving again after a turn ended or was cancelled. */
  saveAgain: number;
  /** The task log snapshot: GET /messages and the POST to Coder together. */
  snapshot: number;
}

export function stopBounds(template: { turnMs: number; termMs: number }): StopBounds {
  return { lock: 500, standDown: 2000, save: 2000, saveAgain: 1000, snapshot: 2000, ...endBounds(template) };
}

/** The stop's worst case: every step's bound. */
export function stopBudgetMs(bounds: StopBounds): number {
  return Object.values(bounds).reduce((sum, ms) => sum + ms, 0);
}

/** The AgentAPI the PID file names, if it still runs on this port; says what it found. */
export async function findAgentapiToStop(pidFile: string, port: number): Promise<number | null> {
  const found = await findRunningAgentapi(pidFile, port);
  const messages: Record<typeof found.status, string> = {
    running: `AgentAPI is PID ${found.pid}`,
    "no-file": `no PID in ${pidFile}; nothing to signal`,
    dead: `PID ${found.pid} from ${pidFile} is not running; nothing to signal`,
    foreign: `PID ${found.pid} from ${pidFile} is not this AgentAPI (its command line differs); it is left alone`,
  };
  log(messages[found.status]);
  return found.status === "running" ? found.pid : null;
}

/**
 * The whole stop holds the module folder's lifecycle lock, so no start or
 * supervisor launches or claims anything while it runs, and a second stop at
 * the same time waits for this one and then finds nothing left to do. A start
 * or the supervisor holds it for milliseconds; past the bound (a stuck
 * holder) the stop goes on without it, because the stop must always end.
 */
export async function takeLock(
  moduleDir: string,
  waitForStopMs: number,
  boundMs: number,
): Promise<LifecycleLock | null> {
  let outcome: LockOutcome;
  try {
    outcome = await acquireLifecycleLock(moduleDir, "stop", {
      patienceMs: (holder) => (holder.startsWith("stop ") ? waitForStopMs : boundMs),
    });
  } catch (error) {
    // Creating the lock's folder and socket needs a little disk, which a full disk refuses.
    warn(`could not take the lifecycle lock of ${moduleDir} (${(error as Error).message}); stopping without it`);
    return null;
  }
  if ("lock" in outcome) return outcome.lock;
  if ("busy" in outcome)
    warn(
      `${outcome.busy} still held the lifecycle lock of ${moduleDir} after ${outcome.waitedMs} ms; stopping without it`,
    );
  else if ("aborted" in outcome) warn(`stopping without the lifecycle lock: ${outcome.aborted}`);
  return null;
}

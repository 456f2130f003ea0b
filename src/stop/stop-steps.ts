import { findRunningAgentapi } from "../agentapi/server.js";
import { log } from "../lib/log.js";
import { type EndBounds, endBounds } from "../lifecycle/agentapi-end.js";

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

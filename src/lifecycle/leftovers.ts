import { log } from "../lib/log.js";
import { environHas, sessionOf, signal, startedWith, waitForExit } from "../lib/processes.js";

// Goose's tool calls run as the workspace user, and what they start in the
// background outlives Goose: `setsid` leaves AgentAPI's session and process
// group, and the process is then init's. With the Agent Firewall such a
// process could wait for the next launch to change what it runs. Each launch
// gives AgentAPI this variable, which everything it starts (the firewall,
// Goose, its tool calls) inherits; before the next launch, and once the stop
// has ended AgentAPI, whatever still has it is what the last Goose left.
const MARK = "GOOSE_MODULE_GOOSE_OF";

/** The variable a launch adds to AgentAPI's environment: the module folder names whose Goose it is. */
export function runMark(moduleDir: string): Record<string, string> {
  return { [MARK]: moduleDir };
}

/**
 * What the launch spawned, read while AgentAPI runs: the leader of the session
 * the launch gave it (lib/detached.ts), which is AgentAPI itself or a wrapper
 * script that runs it (a PATH `agentapi` may be one).
 */
export async function launchedProcess(agentapiPid: number): Promise<number | null> {
  return sessionOf(agentapiPid);
}

// A wrapper around AgentAPI has the mark too, and ends a moment after
// AgentAPI; it is the launch's, not Goose's, so the stop lets it end first.
const LAUNCHED_EXIT_MS = 1000;

/**
 * Ends (SIGKILL) every process the last Goose's commands left running. Only
 * while no AgentAPI of this module runs or starts: a launch under the
 * lifecycle lock, a stop that ended the AgentAPI it found. A process that
 * replaced its whole environment is not found.
 */
export async function endLeftovers(moduleDir: string, launched: number | null = null): Promise<void> {
  const mark = `${MARK}=${moduleDir}`;
  if (launched !== null && environHas(launched, mark)) await waitForExit(launched, LAUNCHED_EXIT_MS);
  const pids = await startedWith(mark);
  for (const pid of pids) signal(pid, "SIGKILL");
  if (pids.length > 0) log(`ended what the last Goose's commands left running: PID ${pids.join(", ")}`);
}

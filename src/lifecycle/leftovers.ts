import { log } from "../lib/log.js";
import { signal, startedWith } from "../lib/processes.js";

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
 * Ends (SIGKILL) every process the last Goose's commands left running. Only
 * while no AgentAPI of this module runs or starts: a launch under the
 * lifecycle lock, a stop that ended the AgentAPI it found. A process that
 * replaced its whole environment is not found.
 */
export async function endLeftovers(moduleDir: string): Promise<void> {
  const pids = await startedWith(`${MARK}=${moduleDir}`);
  for (const pid of pids) signal(pid, "SIGKILL");
  if (pids.length > 0) log(`ended what the last Goose's commands left running: PID ${pids.join(", ")}`);
}

// What a script's output says about the signals it sent.

/** The stop's line for the supervisor's stand-down fallback (supervisor/process.ts, standDownSupervisor). */
export const SUPERVISOR_FALLBACK = /the supervisor \(PID \d+\) did not stand down within \d+ ms of SIGTERM/;

/**
 * The lines of a script's output that signal AgentAPI or Goose: a graceful
 * stop has none. The supervisor's stand-down fallback is not one of them: the
 * stop SIGKILLs the supervisor's own process group when its sh has not exited
 * within its bound, which on a starved machine can happen to a sh that never
 * got the CPU, and that group holds neither Goose nor AgentAPI (each launch
 * starts AgentAPI in a session of its own). stop.test.ts tests that fallback.
 */
export function agentSignals(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => /SIGTERM|SIGKILL/.test(line))
    .filter((line) => !SUPERVISOR_FALLBACK.test(line));
}

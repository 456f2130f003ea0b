/** When the supervisor restarts AgentAPI, how long it waits first, and when it gives up. */
export interface RestartPolicy {
  /** The wait before the first restart; each failed restart in the window doubles it (1 s, 2 s, 4 s, ...). */
  firstDelayMs: number;
  /** This many failed restarts within `windowMs` and the supervisor gives up. */
  maxFailures: number;
  windowMs: number;
  /** A run that stays up this long was a success: the count of failures starts again. */
  stayUpMs: number;
}

export const RESTART_POLICY: RestartPolicy = {
  firstDelayMs: 1000,
  maxFailures: 5,
  windowMs: 10 * 60_000,
  stayUpMs: 60_000,
};

/** What the supervisor remembers between restarts. */
export interface RestartHistory {
  /** When each failed restart ended, oldest first; only those within the policy's window. */
  failures: number[];
}

export const NO_FAILURES: RestartHistory = { failures: [] };

/** One run of AgentAPI as the supervisor saw it end. */
export interface EndedRun {
  /** Whether the supervisor started this run (the start script started the first one). */
  restarted: boolean;
  /** False when the restart did not even get AgentAPI and Goose up. */
  launched: boolean;
  startedAt: number;
  endedAt: number;
}

/**
 * Counts a restart as failed when it could not launch or did not stay up; a
 * run that stayed up, the start script's included, clears the count.
 */
export function noteRunEnded(history: RestartHistory, run: EndedRun, policy = RESTART_POLICY): RestartHistory {
  const stayedUp = run.launched && run.endedAt - run.startedAt >= policy.stayUpMs;
  if (stayedUp) return NO_FAILURES;
  const recent = history.failures.filter((at) => run.endedAt - at < policy.windowMs);
  return { failures: run.restarted ? [...recent, run.endedAt] : recent };
}

export type SupervisorStep =
  | { action: "stand-down"; reason: string }
  | { action: "give-up"; reason: string }
  | { action: "restart"; delayMs: number; attempt: number };

/**
 * What to do once AgentAPI is gone. A stop always wins; a module folder that
 * is gone means the module was removed. Otherwise restart after a wait that
 * doubles with each recent failure, until there have been too many.
 */
export function decideRestart(
  input: { history: RestartHistory; now: number; stopRequested: boolean; folderPresent: boolean; lastProblem: string },
  policy = RESTART_POLICY,
): SupervisorStep {
  if (input.stopRequested)
    return { action: "stand-down", reason: "the stop script asked for AgentAPI to stop; nothing is restarted" };
  if (!input.folderPresent)
    return { action: "stand-down", reason: "the module's folder is gone, so the module was removed" };
  const recent = input.history.failures.filter((at) => input.now - at < policy.windowMs).length;
  if (recent >= policy.maxFailures) {
    const minutes = Math.round(policy.windowMs / 60_000);
    return {
      action: "give-up",
      reason: `${recent} restarts failed within ${minutes} minutes, so the supervisor gave up (last problem: ${input.lastProblem}). Fix the cause, then restart the workspace`,
    };
  }
  return { action: "restart", delayMs: policy.firstDelayMs * 2 ** recent, attempt: recent + 1 };
}

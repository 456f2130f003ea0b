import type { StateSummary } from "./state-file.js";

export interface StopVerdict {
  action: "keep" | "restore";
  lost: boolean;
  reason: string;
}

/**
 * Whether the state file left by a stop still holds the conversation it held
 * when the workspace started. AgentAPI stopped before it loaded the saved chat
 * writes a near-empty file over the good one; the start script's backup undoes
 * that.
 */
export function judgeStateAfterStop(
  after: StateSummary,
  backup: StateSummary,
  opts: { persistence: boolean; wasRunning: boolean },
): StopVerdict {
  if (!opts.persistence) return { action: "keep", lost: false, reason: "persistence off, nothing to check" };
  const had = backup.kind === "valid" ? backup.messages : 0;
  if (after.kind === "valid" && after.messages >= had) {
    return {
      action: "keep",
      lost: false,
      reason: `${after.messages} message(s) saved${had ? ` (${had} at start)` : ""}`,
    };
  }
  const what =
    after.kind === "valid"
      ? `the state file holds ${after.messages} message(s), fewer than the ${had} it held at start`
      : after.kind === "missing"
        ? "no state file was written"
        : `the state file is unreadable (${after.reason})`;
  if (backup.kind === "valid") return { action: "restore", lost: false, reason: what };
  if (after.kind === "missing" && !opts.wasRunning)
    return { action: "keep", lost: false, reason: "no state file, and no AgentAPI was running to write one" };
  if (after.kind === "missing") {
    return {
      action: "keep",
      lost: true,
      reason:
        "AgentAPI stopped without saving, so this session's chat history is lost (Goose's own session is not affected)",
    };
  }
  return { action: "keep", lost: true, reason: `${what}, and there is no backup to restore` };
}

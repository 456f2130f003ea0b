import { rm } from "node:fs/promises";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { log, warn } from "../lib/log.js";
import { setAside } from "../lib/set-aside.js";
import { cleanStatusMessages } from "../lifecycle/state-verify.js";
import type { ModulePaths } from "../settings/config.js";
import type { LaunchPlan } from "./launch-plan.js";
import type { ChatOwner } from "./session-decision.js";

// Set-aside chats are the user's, so none is deleted when it is set aside;
// beyond this many, the oldest go, at a workspace start only. A supervisor's
// restarts can repeat many times unattended, so they never delete one.
const SET_ASIDE_KEEP = 5;

/** Moves a state file aside without deleting it, so nothing the user had is lost. */
async function setStateAside(paths: ModulePaths, why: string, restart: boolean): Promise<void> {
  const { kept, removed } = await setAside(paths.stateFile, restart ? Number.POSITIVE_INFINITY : SET_ASIDE_KEEP);
  await rm(paths.stateBackup, { force: true });
  warn(`${why}; moved ${paths.stateFile} to ${kept} so the dashboard does not show a history Goose cannot remember`);
  if (removed.length > 0)
    log(`removed ${removed.length} set-aside chat(s) older than the newest ${SET_ASIDE_KEEP}: ${removed.join(", ")}`);
}

/**
 * Readies AgentAPI's chat file for this launch and records which Goose session
 * it belongs to. Returns the backup the stop script restores if AgentAPI is
 * stopped before it has loaded the chat and overwrites it with a near-empty one.
 */
export async function prepareState(paths: ModulePaths, plan: LaunchPlan): Promise<string | null> {
  const { decision, stateText, stateSummary, probe } = plan;
  await rm(`${paths.stateFile}.tmp`, { force: true });
  let backup: string | null = null;
  if (decision.state === "set-aside") {
    await setStateAside(paths, decision.stateReason ?? "stale AgentAPI state", plan.restart);
  } else if (decision.state === "keep" && stateSummary.kind === "valid" && stateText !== null) {
    await writeFileAtomic(paths.stateBackup, await cleanStatusMessages(paths.stateFile, stateText), { mode: 0o600 });
    log(`AgentAPI state: ${stateSummary.messages} message(s) kept; backup at ${paths.stateBackup}`);
    backup = paths.stateBackup;
  } else {
    await rm(paths.stateBackup, { force: true });
  }
  const owner: ChatOwner = {
    session_name: plan.sessionName,
    session_id: decision.mode === "warm" && probe.kind === "found" ? probe.id : null,
  };
  await writeFileAtomic(paths.stateOwner, `${JSON.stringify(owner)}\n`, { mode: 0o600 });
  return backup;
}

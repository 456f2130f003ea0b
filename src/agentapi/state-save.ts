import { open } from "node:fs/promises";
import path from "node:path";
import { diskFullNote } from "../lib/disk-space.js";
import { fileIdentity, sameIdentity } from "../lib/files.js";
import { watchFolders } from "../lib/folder-changes.js";
import { log, warn } from "../lib/log.js";
import { pollUntil } from "../lib/poll.js";
import { signal } from "../lib/processes.js";

async function readFrom(file: string, offset: number): Promise<string> {
  const handle = await open(file, "r").catch(() => null);
  if (!handle) return "";
  try {
    const { size } = await handle.stat();
    if (size <= offset) return "";
    const buffer = Buffer.alloc(size - offset);
    await handle.read(buffer, 0, buffer.length, offset);
    return buffer.toString("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Asks AgentAPI to save its chat (SIGUSR1) and waits for a sign that it did.
 * SIGUSR1 has no acknowledgement. AgentAPI renames a fresh file over the state
 * file (new inode) and logs the outcome, including "Skipping state save" when
 * nothing changed (PTYConversation.SaveState in lib/screentracker and
 * cmd/server/signals_unix.go, coder/agentapi @ v0.12.2), so either sign ends
 * the wait. Both folders are watched from before the signal, so the wait ends
 * as soon as either changes; the poll is the fallback where watching fails.
 */
export async function saveState(
  pid: number,
  stateFile: string,
  agentLog: string,
  timeoutMs: number,
): Promise<{ confirmed: boolean; note: string }> {
  const [before, logAt] = await Promise.all([fileIdentity(stateFile, true), fileIdentity(agentLog, true)]);
  const logOffset = logAt.kind === "file" ? Number(logAt.size) : 0;
  const changes = watchFolders([path.dirname(stateFile), path.dirname(agentLog)]);
  try {
    // Gone already (it crashed, or Goose left and AgentAPI with it): its own exit saved what it could.
    if (!signal(pid, "SIGUSR1"))
      return { confirmed: false, note: `AgentAPI (PID ${pid}) had exited before it could be asked to save` };
    const result = await pollUntil(
      async () => {
        const now = await fileIdentity(stateFile, true);
        if (now.kind === "file" && !sameIdentity(before, now)) return { confirmed: true, note: "state file rewritten" };
        const said = await readFrom(agentLog, logOffset);
        if (said.includes("State saved successfully")) return { confirmed: true, note: "AgentAPI logged the save" };
        if (said.includes("Skipping state save"))
          return { confirmed: true, note: "nothing changed since the last save" };
        if (said.includes("Failed to save"))
          return { confirmed: false, note: "AgentAPI reported a failed save (see its log)" };
        return undefined;
      },
      { timeoutMs, intervalMs: 10, wait: changes.wait },
    );
    return "value" in result ? result.value : { confirmed: false, note: `no confirmation within ${timeoutMs} ms` };
  } finally {
    changes.close();
  }
}

/** The stop's save step: asks a running AgentAPI whose start confirmed persistence to save, and says how that went. */
export async function saveBeforeStop(opts: {
  /** What the launch record says of persistence (the stop's reading of it). */
  launched: { persistence: boolean; persistenceReason: string; stateFile: string };
  /** The running AgentAPI's PID; null when none runs. */
  agentapiPid: number | null;
  agentLog: string;
  why: string;
  timeoutMs: number;
}): Promise<void> {
  const { launched, agentapiPid } = opts;
  if (!launched.persistence) return log(`save skipped: state persistence is off (${launched.persistenceReason})`);
  if (agentapiPid === null) return log("save skipped: AgentAPI is not running");
  const outcome = await saveState(agentapiPid, launched.stateFile, opts.agentLog, opts.timeoutMs);
  const full = outcome.confirmed ? null : await diskFullNote(launched.stateFile);
  (outcome.confirmed ? log : warn)(`save (${opts.why}): ${outcome.note}${full ? `; ${full}` : ""}`);
}

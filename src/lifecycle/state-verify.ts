import { judgeStateAfterStop } from "../agentapi/state-check.js";
import { type StateSummary, summarizeState } from "../agentapi/state-file.js";
import { removeStatusOnlyMessages } from "../goose/chat-clean.js";
import { copyFileAtomic, writeFileAtomic } from "../lib/atomic-write.js";
import { diskFullNote } from "../lib/disk-space.js";
import { readOptional } from "../lib/files.js";
import { log, warn } from "../lib/log.js";

/**
 * After AgentAPI is gone: puts back the copy taken at start if AgentAPI wrote
 * a near-empty chat over it, and removes messages that are only Goose's
 * spinner. Returns true when the chat of this run is lost.
 */
export async function verifyStateAfterStop(opts: {
  stateFile: string;
  backupFile: string | null;
  persistence: boolean;
  wasRunning: boolean;
}): Promise<boolean> {
  let text: string | null;
  try {
    text = await readOptional(opts.stateFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EISDIR") throw error;
    warn(
      `state: ${opts.stateFile} is a folder, so no chat can be saved there; move it away, or set state_file_path to a file path`,
    );
    return false;
  }
  const after = summarizeState(text);
  const backup: StateSummary = opts.backupFile
    ? summarizeState(await readOptional(opts.backupFile))
    : { kind: "missing" };
  const verdict = judgeStateAfterStop(after, backup, { persistence: opts.persistence, wasRunning: opts.wasRunning });
  const full = verdict.action === "restore" || verdict.lost ? await diskFullNote(opts.stateFile) : null;
  const because = full ? `; ${full}` : "";
  if (verdict.action === "restore" && opts.backupFile) {
    await copyFileAtomic(opts.backupFile, opts.stateFile);
    warn(`${verdict.reason}${because}; restored ${opts.stateFile} from ${opts.backupFile}`);
  } else if (verdict.lost) {
    warn(`state: ${verdict.reason}${because}`);
  } else {
    log(`state: ${verdict.reason}`);
  }
  if (opts.persistence && verdict.action === "keep" && text !== null) await cleanStatusMessages(opts.stateFile, text);
  return verdict.lost;
}

/**
 * Removes agent messages that hold only Goose's spinner or status lines;
 * writes nothing when there are none. Returns the text the file now holds.
 */
export async function cleanStatusMessages(stateFile: string, text: string): Promise<string> {
  const cleaned = removeStatusOnlyMessages(text);
  if (!cleaned) return text;
  try {
    await writeFileAtomic(stateFile, cleaned.text, { mode: 0o600 });
    log(`state: removed ${cleaned.removed} message(s) that showed only Goose's spinner or status line`);
    return cleaned.text;
  } catch (error) {
    warn(
      `state: could not remove ${cleaned.removed} spinner-only message(s) from ${stateFile}: ${(error as Error).message}`,
    );
    return text;
  }
}

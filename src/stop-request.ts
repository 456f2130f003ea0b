import { readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "./atomic-write.js";
import { warn } from "./log.js";

/**
 * The Coder agent may run the stop script while the start script is still
 * installing or waiting for Goose. The stop leaves a time stamp here; a start
 * that began before it does not launch AgentAPI, or stops the one it just
 * launched, so the stop always wins.
 */
function requestFile(moduleDir: string): string {
  return path.join(moduleDir, "stop-requested");
}

/**
 * Records that a stop ran now. Best effort: on a full disk the stop goes on
 * without it, with a warning. Without the module's folder no start has begun
 * (creating it is a start's first step), so there is nothing to tell.
 */
export async function recordStopRequest(moduleDir: string, now = Date.now()): Promise<void> {
  try {
    await writeFileAtomic(requestFile(moduleDir), `${now}\n`, { mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      warn(`could not record the stop for a start still running (${(error as Error).message})`);
  }
}

/** Whether a stop ran at or after `sinceMs` (when this start began). */
export async function stopRequestedSince(moduleDir: string, sinceMs: number): Promise<boolean> {
  const text = await readFile(requestFile(moduleDir), "utf8").catch(() => "");
  const at = Number(text.trim());
  return Number.isFinite(at) && text.trim() !== "" && at >= sinceMs;
}

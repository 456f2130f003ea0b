import { readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "./safe-fs.js";

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
 * without it. Without the module's folder no start has begun (creating it is
 * a start's first step), so there is nothing to tell.
 */
export async function recordStopRequest(moduleDir: string, now = Date.now()): Promise<string | null> {
  try {
    await writeFileAtomic(requestFile(moduleDir), `${now}\n`, { mode: 0o600 });
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? null : (error as Error).message;
  }
}

/** Whether a stop ran at or after `sinceMs` (when this start began). */
export async function stopRequestedSince(moduleDir: string, sinceMs: number): Promise<boolean> {
  const text = await readFile(requestFile(moduleDir), "utf8").catch(() => "");
  const at = Number(text.trim());
  return Number.isFinite(at) && text.trim() !== "" && at >= sinceMs;
}

import { constants, readdirSync, renameSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { exists } from "../lib/files.js";
import { warn } from "../lib/log.js";

/**
 * The Coder agent may run the stop script while the start script is still
 * installing or waiting for Goose. Every stop adds one to a count kept in the
 * module folder; a start (or the supervisor it leaves) notes the count when it
 * begins, and once the count has moved it does not launch AgentAPI, or stops
 * the one it just launched, so the stop always wins. A count, not a time: a
 * start must not depend on its clock agreeing with the clock of the stop that
 * wrote the mark (a pod moved to another node, a VM restored from a snapshot,
 * an NTP step), and a stop long ago never holds back a later start.
 *
 * The count is the name of one empty file, `stop-count-<n>`, and a stop moves
 * it on with rename(2): no data is written, so a full disk does not keep the
 * stop from counting, and two stops at once both count (a rename whose source
 * has just gone fails, and is tried again on the new name).
 */
const PREFIX = "stop-count-";

function countOf(name: string): number | null {
  if (!name.startsWith(PREFIX)) return null;
  const digits = name.slice(PREFIX.length);
  return /^[0-9]{1,15}$/.test(digits) ? Number(digits) : null;
}

/** How many stops this module folder has seen; 0 before the first (or without the folder). */
export async function stopCount(moduleDir: string): Promise<number> {
  let names: string[] = [];
  try {
    names = readdirSync(moduleDir);
  } catch {
    return 0; // no module folder yet
  }
  return names.reduce((most, name) => Math.max(most, countOf(name) ?? 0), 0);
}

/** Whether a stop ran since `seen` was read. */
export async function stoppedSince(moduleDir: string, seen: number): Promise<boolean> {
  return (await stopCount(moduleDir)) !== seen;
}

async function countOnce(moduleDir: string): Promise<number> {
  const now = await stopCount(moduleDir);
  const next = path.join(moduleDir, `${PREFIX}${now + 1}`);
  if (now > 0) {
    renameSync(path.join(moduleDir, `${PREFIX}${now}`), next);
  } else {
    const handle = await open(
      next,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    await handle.close();
  }
  return now + 1;
}

/**
 * Counts this stop; returns the new count, or null when there is no module
 * folder (a start creates it first, so no start has begun) or the count could
 * not be moved on, which is said as a warning.
 */
export async function recordStop(moduleDir: string): Promise<number | null> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await countOnce(moduleDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another stop moved the count on first: count again from the new name.
      if ((code === "ENOENT" || code === "EEXIST") && attempt < 5) {
        if (code === "ENOENT" && !exists(moduleDir)) return null;
        continue;
      }
      warn(
        `could not count this stop in ${moduleDir} (${(error as Error).message}); a start still running there may launch AgentAPI after this stop`,
      );
      return null;
    }
  }
}

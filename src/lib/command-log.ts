import { constants, openSync } from "node:fs";
import { readFile } from "node:fs/promises";

export function tail(text: string, lines = 20): string {
  const all = text.replace(/\s+$/, "").split("\n");
  return all.slice(-lines).join("\n");
}

/** The last lines of a log, for an error message; "(no log)" when it cannot be read. */
export async function logTail(file: string, lines = 20): Promise<string> {
  try {
    return tail(await readFile(file, "utf8"), lines);
  } catch {
    return "(no log)";
  }
}

/** Opens a log for appending, created 0600, never through a link planted at its name; returns its descriptor. */
export function openLog(file: string): number {
  return openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
}

// How big AgentAPI's and the supervisor's logs may grow before the supervisor
// rotates them (supervisor.sh), and how many rotated copies stay: they are
// appended to at every start, restart and autosave, for the life of the
// workspace's home volume.
export const LOG_LIMITS = { maxBytes: 5 * 1024 * 1024, generations: 3 };

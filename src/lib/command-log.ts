import { constants } from "node:fs";
import { type FileHandle, lstat, open, readFile, rename } from "node:fs/promises";

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

/** Opens a log for appending, created 0600, never through a link planted at its name. */
export function openLog(file: string): Promise<FileHandle> {
  return open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
}

/** How big a long-lived log may grow before it is rotated, and how many rotated copies stay. */
export interface LogLimits {
  maxBytes: number;
  generations: number;
}

// AgentAPI's and the supervisor's logs are appended to at every start, restart
// and autosave, for the life of the workspace's home volume.
export const LOG_LIMITS: LogLimits = { maxBytes: 5 * 1024 * 1024, generations: 3 };

async function renameIfThere(from: string, to: string): Promise<void> {
  await rename(from, to).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}

/**
 * Opens a long-lived log for appending like openLog, first moving it to
 * `<file>.1` (and `.1` to `.2`, and so on; the oldest beyond `generations`
 * goes) once it holds `maxBytes` or more. A rename moves a link itself, never
 * what it points to. A process still writing to the old file keeps writing
 * to the renamed one.
 */
export async function openRotatedLog(file: string, limits: LogLimits = LOG_LIMITS): Promise<FileHandle> {
  const size = await lstat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size >= limits.maxBytes) {
    for (let n = limits.generations - 1; n >= 1; n--) await renameIfThere(`${file}.${n}`, `${file}.${n + 1}`);
    await renameIfThere(file, `${file}.1`);
  }
  return openLog(file);
}

import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import { StepError } from "./log.js";

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Creates the missing folders of `dir`, each with mode 0700 whatever the
 * umask, and leaves existing ones alone. Returns the folders it created.
 */
export async function mkdirPrivate(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    try {
      lstatSync(current);
      break;
    } catch (error) {
      if (errno(error) !== "ENOENT") throw error;
      missing.unshift(current);
      if (path.dirname(current) === current) break;
    }
  }
  const created: string[] = [];
  for (const folder of missing) {
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      // Another process made it in the meantime; it is not ours to chmod.
      if (errno(error) === "EEXIST") continue;
      throw error;
    }
    // mkdir's mode is filtered through the umask (mkdir(2)).
    chmodSync(folder, 0o700);
    created.push(folder);
  }
  return created;
}

/**
 * Makes `dir` ready to hold the module's private files: missing parts are
 * created 0700, and an existing folder must be a real directory owned by this
 * user that nobody else can write to, since another user who can write there
 * could swap the module's files for links.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdirPrivate(dir);
  let fd: number;
  try {
    // O_NOFOLLOW checks the folder itself, not whatever a link points to.
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if (errno(error) !== "ELOOP" && errno(error) !== "ENOTDIR") throw error;
    // Linux answers ENOTDIR for a link to a folder, as for a file.
    if (lstatSync(dir).isSymbolicLink()) {
      throw new StepError(
        `${dir} is a symbolic link; the module keeps its private files only in a real folder. Replace the link with a folder (mkdir -m 700 ${dir}) or choose another path.`,
      );
    }
    throw new StepError(`${dir} exists and is not a folder; move it away so the module can create its folder there.`);
  }
  try {
    const info = fstatSync(fd);
    const uid = typeof process.getuid === "function" ? process.getuid() : null;
    if (uid !== null && info.uid !== uid) {
      throw new StepError(
        `${dir} belongs to user id ${info.uid}, not to this user (${uid}); the module only keeps its files in a folder it owns. Fix the owner (chown) or choose another path.`,
      );
    }
    if ((info.mode & 0o022) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(3, "0");
      throw new StepError(
        `${dir} can be written by other users (mode ${mode}); they could replace the module's files. Run chmod go-w ${dir}, or choose another path.`,
      );
    }
  } finally {
    closeSync(fd);
  }
}

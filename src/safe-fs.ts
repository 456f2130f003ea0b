import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, readdir, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { StepError } from "./log.js";

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function currentUid(): number | null {
  return typeof process.getuid === "function" ? process.getuid() : null;
}

/**
 * Creates the missing folders of `dir`, each with mode 0700 whatever the
 * umask, and leaves existing ones alone. Returns the folders it created.
 */
export async function mkdirPrivate(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    try {
      await lstat(current);
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
      await mkdir(folder, { mode: 0o700 });
    } catch (error) {
      // Another process made it in the meantime; it is not ours to chmod.
      if (errno(error) === "EEXIST") continue;
      throw error;
    }
    // mkdir's mode is filtered through the umask (mkdir(2)).
    await chmod(folder, 0o700);
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
  let handle;
  try {
    // O_NOFOLLOW checks the folder itself, not whatever a link points to.
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if (errno(error) !== "ELOOP" && errno(error) !== "ENOTDIR") throw error;
    // Linux answers ENOTDIR for a link to a folder, as for a file.
    if ((await lstat(dir)).isSymbolicLink()) {
      throw new StepError(`${dir} is a symbolic link; the module keeps its private files only in a real folder. Replace the link with a folder (mkdir -m 700 ${dir}) or choose another path.`);
    }
    throw new StepError(`${dir} exists and is not a folder; move it away so the module can create its folder there.`);
  }
  try {
    const info = await handle.stat();
    const uid = currentUid();
    if (uid !== null && info.uid !== uid) {
      throw new StepError(`${dir} belongs to user id ${info.uid}, not to this user (${uid}); the module only keeps its files in a folder it owns. Fix the owner (chown) or choose another path.`);
    }
    if ((info.mode & 0o022) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(3, "0");
      throw new StepError(`${dir} can be written by other users (mode ${mode}); they could replace the module's files. Run chmod go-w ${dir}, or choose another path.`);
    }
  } finally {
    await handle.close();
  }
}

/** Throws a clear error when `file` is a folder, a symbolic link or another non-file; a missing path is fine. */
export async function checkWritableTarget(file: string): Promise<void> {
  let info;
  try {
    info = await lstat(file);
  } catch (error) {
    if (errno(error) === "ENOENT") return;
    throw error;
  }
  if (info.isDirectory()) throw new StepError(`${file} is a folder, but the module needs to write a file there. Move the folder away.`);
  if (info.isSymbolicLink()) throw new StepError(`${file} is a symbolic link; the module does not write through links it did not create. Remove the link.`);
  if (!info.isFile()) throw new StepError(`${file} exists and is not a regular file; move it away.`);
}

function tempNameFor(file: string): string {
  // NAME_MAX is 255 bytes on Linux; keep room for the suffix.
  const base = path.basename(file).slice(0, 100);
  return path.join(path.dirname(file), `.${base}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
}

/**
 * Replaces `file` with `data` in one step: a new file is written next to it
 * under a unique name, then renamed over it. The temporary file is created
 * with O_EXCL, so it never follows a link planted at its name, and the rename
 * replaces a link at `file` rather than writing through it.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: { mode: number; fsync?: boolean }): Promise<void> {
  const existing = await lstat(file).catch((error) => {
    if (errno(error) === "ENOENT") return null;
    throw error;
  });
  if (existing?.isDirectory()) throw new StepError(`${file} is a folder, but the module needs to write a file there. Move the folder away.`);
  const temp = tempNameFor(file);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, options.mode);
  try {
    try {
      // open(2)'s mode is filtered through the umask; set it exactly.
      await handle.chmod(options.mode);
      await handle.writeFile(data);
      if (options.fsync) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** Copies `src` (not through a link at `src`) to `dst` via writeFileAtomic. */
export async function copyFileAtomic(src: string, dst: string, options: { mode?: number; fsync?: boolean } = {}): Promise<void> {
  const handle = await open(src, constants.O_RDONLY | constants.O_NOFOLLOW);
  let data: Buffer;
  try {
    data = await handle.readFile();
  } finally {
    await handle.close();
  }
  await writeFileAtomic(dst, data, { mode: options.mode ?? 0o600, fsync: options.fsync });
}

// The suffix set-aside copies get (state-prep.ts): new Date().toISOString()
// with ':' and '.' replaced, a fixed-width UTC time that sorts like the time.
const SET_ASIDE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/**
 * Which of `names` to delete so that the newest `keep` copies remain. Only
 * names made of `prefix` and a set-aside time count; anything else in the
 * folder is never chosen.
 */
export function choosePrunable(names: string[], prefix: string, keep: number): string[] {
  const copies = names.filter((name) => name.startsWith(prefix) && SET_ASIDE_TIME.test(name.slice(prefix.length)));
  copies.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  return copies.slice(Math.max(0, keep));
}

/** Deletes all but the newest `keep` regular files named `prefix` + set-aside time in `dir`; returns the deleted paths. */
export async function pruneOldest(dir: string, prefix: string, keep: number): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  const deleted: string[] = [];
  for (const name of choosePrunable(files, prefix, keep)) {
    const file = path.join(dir, name);
    try {
      await unlink(file);
      deleted.push(file);
    } catch (error) {
      if (errno(error) !== "ENOENT") throw error;
    }
  }
  return deleted;
}

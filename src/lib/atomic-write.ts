import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  type Stats,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { randomSuffix } from "./files.js";
import { StepError } from "./log.js";

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

function folderInTheWay(file: string): StepError {
  return new StepError(`${file} is a folder, but the module needs to write a file there. Move the folder away.`);
}

/** Throws a clear error when `file` is a folder, a symbolic link or another non-file; a missing path is fine. */
export async function checkWritableTarget(file: string): Promise<void> {
  const info = lstatOrNull(file);
  if (info === null) return;
  if (info.isDirectory()) throw folderInTheWay(file);
  if (info.isSymbolicLink())
    throw new StepError(
      `${file} is a symbolic link; the module does not write through links it did not create. Remove the link.`,
    );
  if (!info.isFile()) throw new StepError(`${file} exists and is not a regular file; move it away.`);
}

function tempNameFor(file: string): string {
  // NAME_MAX is 255 bytes on Linux; keep room for the suffix.
  const base = path.basename(file).slice(0, 100);
  return path.join(path.dirname(file), `.${base}.${process.pid}.${randomSuffix()}.tmp`);
}

/**
 * Finishes `temp`, which this process has just created, and renames it over
 * `file`. rename(2) replaces a link at `file` rather than writing through it.
 * On any failure the temporary file goes and `file` is left as it was.
 */
function renameOver(temp: string, file: string, finish: () => void): void {
  try {
    finish();
    renameSync(temp, file);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // Gone already.
    }
    throw error;
  }
}

/**
 * Replaces `file` with `data` in one step: a new file is written next to it
 * under a unique name, then renamed over it. The temporary file is created
 * with O_EXCL, so it never follows a link planted at its name.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options: { mode: number; fsync?: boolean },
): Promise<void> {
  if (lstatOrNull(file)?.isDirectory()) throw folderInTheWay(file);
  const temp = tempNameFor(file);
  const fd = openSync(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    options.mode,
  );
  renameOver(temp, file, () => {
    try {
      // open(2)'s mode is filtered through the umask; set it exactly.
      fchmodSync(fd, options.mode);
      writeFileSync(fd, data);
      if (options.fsync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
}

/** Copies `src` (not through a link at `src`) to `dst` via writeFileAtomic. */
export async function copyFileAtomic(
  src: string,
  dst: string,
  options: { mode?: number; fsync?: boolean } = {},
): Promise<void> {
  const fd = openSync(src, constants.O_RDONLY | constants.O_NOFOLLOW);
  let data: Buffer;
  try {
    data = readFileSync(fd);
  } finally {
    closeSync(fd);
  }
  await writeFileAtomic(dst, data, { mode: options.mode ?? 0o600, fsync: options.fsync });
}

/** Points the link `link` at `target` in one step, the way writeFileAtomic replaces a file: symlink(2) refuses an existing name as O_EXCL does. */
export async function replaceSymlink(link: string, target: string): Promise<void> {
  if (lstatOrNull(link)?.isDirectory()) throw folderInTheWay(link);
  const temp = tempNameFor(link);
  symlinkSync(target, temp);
  renameOver(temp, link, () => undefined);
}

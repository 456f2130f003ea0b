import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { access, lstat, readFile, realpath, stat } from "node:fs/promises";

/** A file's text, or null when it does not exist; any other failure is an error worth reporting. */
export async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Whether something is at `file` that this process may look at. */
export async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** `dir` with its links resolved, as Goose stores a working folder; as given when it cannot be resolved. */
export async function resolvedPath(dir: string): Promise<string> {
  return realpath(dir).catch(() => dir);
}

/** Whether an owner uid is this process's user (always, where there are no uids). */
export function ownedByUs(uid: number): boolean {
  return typeof process.getuid !== "function" || process.getuid() === uid;
}

/**
 * What a write, a replacement or a touch of a file changes: its device and
 * inode, size, and modification and change times in nanoseconds (as decimal
 * strings, so JSON keeps every digit). "missing" when nothing is there;
 * "other" for anything but a regular file, which no comparison may trust (a
 * link's own identity says nothing of what it points to).
 */
export type FileIdentity =
  | { kind: "file"; dev: string; ino: string; size: string; mtime_ns: string; ctime_ns: string }
  | { kind: "missing" }
  | { kind: "other"; why: string };

/** The identity of `file` itself, not of what a link there points to; with `follow`, of what the path leads to. */
export async function fileIdentity(file: string, follow = false): Promise<FileIdentity> {
  try {
    const info = await (follow ? stat : lstat)(file, { bigint: true });
    if (!info.isFile()) return { kind: "other", why: "not a regular file" };
    const { dev, ino, size, mtimeNs, ctimeNs } = info;
    return {
      kind: "file",
      dev: `${dev}`,
      ino: `${ino}`,
      size: `${size}`,
      mtime_ns: `${mtimeNs}`,
      ctime_ns: `${ctimeNs}`,
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? { kind: "missing" } : { kind: "other", why: code ?? String(error) };
  }
}

/** The SHA-256 of a file, or null when it cannot be read (then it cannot be verified). */
export async function sha256OfFile(file: string): Promise<string | null> {
  const hash = createHash("sha256");
  try {
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } catch {
    return null;
  }
}

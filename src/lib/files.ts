import { accessSync, createReadStream, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import type { Fields } from "./json-fields.js";

// The module's plain file calls (here and in the helpers beside it) use
// Node.js's synchronous API. Each asynchronous call is a round trip through
// libuv's thread pool: about 0.1 ms on an idle machine and over 1 ms on a busy
// one (two cores, two scripts starting and Goose), and a start makes hundreds
// of them one after another on its way to AgentAPI (docs/performance.md). The
// files are small and local; the streams (downloads, checksums) stay
// asynchronous.

/** A file's text, or null when it does not exist; any other failure is an error worth reporting. */
export async function readOptional(file: string): Promise<string | null> {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Whether something is at `file` that this process may look at. */
export async function exists(file: string): Promise<boolean> {
  try {
    accessSync(file);
    return true;
  } catch {
    return false;
  }
}

/** `dir` with its links resolved, as Goose stores a working folder; as given when it cannot be resolved. */
export async function resolvedPath(dir: string): Promise<string> {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
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
    const info = (follow ? statSync : lstatSync)(file, { bigint: true });
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

const IDENTITY_FIELDS = ["dev", "ino", "size", "mtime_ns", "ctime_ns"] as const;

/** Whether two identities are one regular file, unchanged; nothing at either path is the same as nothing. */
export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  if (a.kind !== "file" || b.kind !== "file") return a.kind === "missing" && b.kind === "missing";
  return IDENTITY_FIELDS.every((field) => a[field] === b[field]);
}

/** An identity as a file of the module keeps it, each number a decimal string. */
export function parseIdentity(fields: Fields): FileIdentity {
  const kind = fields.oneOf("kind", ["file", "missing", "other"] as const);
  if (kind === "missing") return { kind };
  if (kind === "other") return { kind, why: fields.string("why") };
  const [dev, ino, size, mtime_ns, ctime_ns] = IDENTITY_FIELDS.map((key) => {
    const value = fields.string(key);
    if (!/^[0-9]+$/.test(value)) throw new Error(`${key} must be a whole number written in decimal`);
    return value;
  }) as [string, string, string, string, string];
  return { kind, dev, ino, size, mtime_ns, ctime_ns };
}

/** The SHA-256 of a file, or null when it cannot be read (then it cannot be verified). */
export async function sha256OfFile(file: string): Promise<string | null> {
  // Loaded at the first hash: a start without a pin or a firewall hashes nothing.
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  try {
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } catch {
    return null;
  }
}

/** A file's text, or null when it cannot be read for any reason. */
export function readTextOrNull(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * Twelve hex digits for a name only this process means to use. A name taken
 * already fails (O_EXCL, a socket's bind) rather than being shared, so it
 * needs to be unlikely, not secret: Math.random, not node:crypto, whose load
 * costs each script about 3 ms at its start.
 */
export function randomSuffix(): string {
  return Math.floor(Math.random() * 2 ** 48)
    .toString(16)
    .padStart(12, "0");
}

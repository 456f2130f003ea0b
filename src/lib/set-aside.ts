import { readdir, rename, unlink } from "node:fs/promises";
import path from "node:path";

const SUFFIX = ".set-aside-";
// toISOString() with ':' and '.' replaced: a fixed-width UTC time that is a
// valid file name and sorts like the time.
const SET_ASIDE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

function timeTag(now: Date): string {
  return now.toISOString().replace(/[:.]/g, "-");
}

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
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return deleted;
}

/** The name `file` gets when it is set aside at `now`: `<file>.set-aside-<time>`. */
export function setAsideName(file: string, now: Date): string {
  return `${file}${SUFFIX}${timeTag(now)}`;
}

/**
 * Renames `file` to `to` (its setAsideName) rather than deleting it, then
 * deletes all but the newest `keep` such copies. Returns the deleted copies.
 */
export async function setAside(file: string, to: string, keep: number): Promise<string[]> {
  await rename(file, to);
  return pruneOldest(path.dirname(file), `${path.basename(file)}${SUFFIX}`, keep);
}

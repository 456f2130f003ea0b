import { mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";

/**
 * Registers a temporary root for the calling test file and returns a function
 * that makes a fresh empty folder under it for each case; the root is removed
 * after the file's tests.
 */
export function scratchFolders(name: string): () => Promise<string> {
  const at = scratchDir(name);
  let n = 0;
  return async () => {
    const dir = at(`case-${n++}`);
    await mkdir(dir);
    return dir;
  };
}

/** One temporary folder for the calling test file, removed after its tests; `at(...parts)` names paths in it. */
export function scratchDir(name: string): (...parts: string[]) => string {
  let root = "";
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), `${name}-`));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
  return (...parts) => path.join(root, ...parts);
}

/** Like scratchFolders, but each fresh folder comes as a function that names paths in it (`at()` is the folder). */
export function scratchPaths(name: string): () => Promise<(...parts: string[]) => string> {
  const fresh = scratchFolders(name);
  return async () => {
    const dir = await fresh();
    return (...parts) => path.join(dir, ...parts);
  };
}

/** A file's text. */
export const readText = (file: string) => readFile(file, "utf8");

/** A path's permission bits. */
export const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

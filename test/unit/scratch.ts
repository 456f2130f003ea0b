import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";

/**
 * Registers a temporary root for the calling test file and returns a function
 * that makes a fresh empty folder under it for each case; the root is removed
 * after the file's tests.
 */
export function scratchFolders(name: string): () => Promise<string> {
  let root = "";
  let n = 0;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), `${name}-`));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
  return async () => {
    const dir = path.join(root, `case-${n++}`);
    await mkdir(dir);
    return dir;
  };
}

/** Like scratchFolders, but each fresh folder comes as a function that names paths in it (`at()` is the folder). */
export function scratchPaths(name: string): () => Promise<(...parts: string[]) => string> {
  const fresh = scratchFolders(name);
  return async () => {
    const dir = await fresh();
    return (...parts) => path.join(dir, ...parts);
  };
}

import { chmod, mkdir, stat, symlink, writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { ensurePrivateDir, mkdirPrivate } from "../../../src/lib/private-dirs.js";
import { scratchFolders, scratchPaths } from "../scratch.js";

const fresh = scratchFolders("private-dirs-test");
const folder = scratchPaths("private-dirs-test");
const mode = async (p: string) => (await stat(p)).mode & 0o777;

const originalUmask = process.umask();
afterEach(() => {
  process.umask(originalUmask);
});

describe.each([0o000, 0o077, 0o022])("under umask %o", (umask) => {
  it("creates missing folders 0700 and returns them", async () => {
    const at = await folder();
    process.umask(umask);
    const made = [at("a"), at("a", "b"), at("a", "b", "c")];
    expect(await mkdirPrivate(at("a", "b", "c"))).toEqual(made);
    for (const p of made) expect(await mode(p)).toBe(0o700);
    await ensurePrivateDir(at("a", "b", "c"));
  });
});

describe("ensurePrivateDir", () => {
  it("leaves an existing private folder as it is", async () => {
    const dir = await fresh();
    await chmod(dir, 0o750);
    await ensurePrivateDir(dir);
    expect(await mode(dir)).toBe(0o750);
  });

  it.each([0o770, 0o757, 0o777])(
    "refuses a folder others can write to (mode %o), naming it and the fix",
    async (bits) => {
      const dir = await fresh();
      await chmod(dir, bits);
      await expect(ensurePrivateDir(dir)).rejects.toThrow(
        new RegExp(`${dir}.*can be written by other users.*chmod go-w`),
      );
    },
  );

  it("refuses a symbolic link, even to a good folder, and a file where the folder should be", async () => {
    const at = await folder();
    await mkdir(at("real"), { mode: 0o700 });
    await symlink(at("real"), at("link"));
    await expect(ensurePrivateDir(at("link"))).rejects.toThrow(/link.*is a symbolic link/);
    await writeFile(at("file"), "");
    await expect(ensurePrivateDir(at("file"))).rejects.toThrow(/exists and is not a folder/);
  });
});

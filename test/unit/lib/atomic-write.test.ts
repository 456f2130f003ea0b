import { lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { checkWritableTarget, copyFileAtomic, replaceSymlink, writeFileAtomic } from "../../../src/lib/atomic-write.js";
import { scratchPaths } from "../scratch.js";

const folder = scratchPaths("atomic-write-test");
const mode = async (p: string) => (await stat(p)).mode & 0o777;

const originalUmask = process.umask();
afterEach(() => {
  process.umask(originalUmask);
});

describe.each([0o000, 0o077, 0o022])("under umask %o", (umask) => {
  it("writes files with exactly the requested mode; a copy is 0600", async () => {
    const at = await folder();
    process.umask(umask);
    await writeFileAtomic(at("private"), "x", { mode: 0o600 });
    expect(await mode(at("private"))).toBe(0o600);
    await writeFileAtomic(at("script"), "x", { mode: 0o700 });
    expect(await mode(at("script"))).toBe(0o700);
    await copyFileAtomic(at("script"), at("copy"));
    expect(await mode(at("copy"))).toBe(0o600);
  });
});

describe("writeFileAtomic", () => {
  it("replaces a symlink planted at the destination instead of writing through it", async () => {
    const at = await folder();
    const [victim, target] = [at("victim"), at("state.json")];
    await writeFile(victim, "precious");
    await symlink(victim, target);
    await writeFileAtomic(target, "new", { mode: 0o600 });
    expect(await readFile(victim, "utf8")).toBe("precious");
    expect((await lstat(target)).isFile()).toBe(true);
    expect(await readFile(target, "utf8")).toBe("new");
  });

  it("fails with a clear error when the destination is a folder, leaving no temporary file", async () => {
    const at = await folder();
    await mkdir(at("state.json"));
    await expect(writeFileAtomic(at("state.json"), "x", { mode: 0o600 })).rejects.toThrow(/state\.json is a folder/);
    expect(await readdir(at())).toEqual(["state.json"]);
  });

  it("replaces an existing file and leaves nothing else behind", async () => {
    const at = await folder();
    const file = at("f");
    await writeFile(file, "old");
    await writeFileAtomic(file, Buffer.from("new"), { mode: 0o640, fsync: true });
    expect(await readFile(file, "utf8")).toBe("new");
    expect(await readdir(at())).toEqual(["f"]);
  });

  it("cleans up its temporary file when the rename fails", async () => {
    const at = await folder();
    // The temporary name is shortened to fit NAME_MAX; the final name does not fit.
    await expect(writeFileAtomic(at("x".repeat(300)), "x", { mode: 0o600 })).rejects.toThrow(/ENAMETOOLONG/);
    expect(await readdir(at())).toEqual([]);
  });
});

describe("copyFileAtomic", () => {
  it("copies through temp + rename and replaces a link at the destination", async () => {
    const at = await folder();
    await writeFile(at("src"), "data");
    await writeFile(at("victim"), "precious");
    await symlink(at("victim"), at("dst"));
    await copyFileAtomic(at("src"), at("dst"));
    expect(await readFile(at("dst"), "utf8")).toBe("data");
    expect(await readFile(at("victim"), "utf8")).toBe("precious");
  });

  it("does not read through a link at the source", async () => {
    const at = await folder();
    await writeFile(at("secret"), "secret");
    await symlink(at("secret"), at("src"));
    await expect(copyFileAtomic(at("src"), at("dst"))).rejects.toThrow(/ELOOP/);
  });
});

describe("replaceSymlink", () => {
  it("creates the link, then repoints it without touching what it pointed to", async () => {
    const at = await folder();
    const link = at("agentapi");
    await writeFile(at("old"), "old binary");
    await replaceSymlink(link, at("old"));
    expect(await readlink(link)).toBe(at("old"));
    await replaceSymlink(link, "/usr/local/bin/agentapi");
    expect(await readlink(link)).toBe("/usr/local/bin/agentapi");
    expect(await readFile(at("old"), "utf8")).toBe("old binary");
    expect((await readdir(at())).sort()).toEqual(["agentapi", "old"]);
  });

  it("replaces a regular file at the name, and refuses a folder there", async () => {
    const at = await folder();
    await writeFile(at("file"), "x");
    await replaceSymlink(at("file"), "/bin/true");
    expect((await lstat(at("file"))).isSymbolicLink()).toBe(true);
    await mkdir(at("folder"));
    await expect(replaceSymlink(at("folder"), "/bin/true")).rejects.toThrow(/folder is a folder/);
    expect((await readdir(at())).sort()).toEqual(["file", "folder"]);
  });
});

describe("checkWritableTarget", () => {
  it("accepts a missing path and a regular file; refuses a folder and a symlink, saying what to do", async () => {
    const at = await folder();
    await checkWritableTarget(at("missing"));
    await writeFile(at("file"), "");
    await checkWritableTarget(at("file"));
    await mkdir(at("folder"));
    await symlink("/etc/passwd", at("link"));
    await expect(checkWritableTarget(at("folder"))).rejects.toThrow(/is a folder.*Move the folder away/);
    await expect(checkWritableTarget(at("link"))).rejects.toThrow(/is a symbolic link.*Remove the link/);
    expect(await readlink(at("link"))).toBe("/etc/passwd");
  });
});

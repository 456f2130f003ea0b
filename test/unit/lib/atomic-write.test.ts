import { lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkWritableTarget, copyFileAtomic, replaceSymlink, writeFileAtomic } from "../../../src/lib/atomic-write.js";
import { scratchFolders } from "../scratch.js";

const fresh = scratchFolders("atomic-write-test");
const mode = async (p: string) => (await stat(p)).mode & 0o777;

const originalUmask = process.umask();
afterEach(() => {
  process.umask(originalUmask);
});

describe.each([0o000, 0o077, 0o022])("under umask %o", (umask) => {
  it("writes files with exactly the requested mode; a copy is 0600", async () => {
    const dir = await fresh();
    process.umask(umask);
    await writeFileAtomic(path.join(dir, "private"), "x", { mode: 0o600 });
    expect(await mode(path.join(dir, "private"))).toBe(0o600);
    await writeFileAtomic(path.join(dir, "script"), "x", { mode: 0o700 });
    expect(await mode(path.join(dir, "script"))).toBe(0o700);
    await copyFileAtomic(path.join(dir, "script"), path.join(dir, "copy"));
    expect(await mode(path.join(dir, "copy"))).toBe(0o600);
  });
});

describe("writeFileAtomic", () => {
  it("replaces a symlink planted at the destination instead of writing through it", async () => {
    const dir = await fresh();
    const victim = path.join(dir, "victim");
    await writeFile(victim, "precious");
    const target = path.join(dir, "state.json");
    await symlink(victim, target);
    await writeFileAtomic(target, "new", { mode: 0o600 });
    expect(await readFile(victim, "utf8")).toBe("precious");
    expect((await lstat(target)).isFile()).toBe(true);
    expect(await readFile(target, "utf8")).toBe("new");
  });

  it("fails with a clear error when the destination is a folder, leaving no temporary file", async () => {
    const dir = await fresh();
    await mkdir(path.join(dir, "state.json"));
    await expect(writeFileAtomic(path.join(dir, "state.json"), "x", { mode: 0o600 })).rejects.toThrow(
      /state\.json is a folder/,
    );
    expect(await readdir(dir)).toEqual(["state.json"]);
  });

  it("replaces an existing file and leaves nothing else behind", async () => {
    const dir = await fresh();
    const file = path.join(dir, "f");
    await writeFile(file, "old");
    await writeFileAtomic(file, Buffer.from("new"), { mode: 0o640, fsync: true });
    expect(await readFile(file, "utf8")).toBe("new");
    expect(await readdir(dir)).toEqual(["f"]);
  });

  it("cleans up its temporary file when the rename fails", async () => {
    const dir = await fresh();
    // The temporary name is shortened to fit NAME_MAX; the final name does not fit.
    await expect(writeFileAtomic(path.join(dir, "x".repeat(300)), "x", { mode: 0o600 })).rejects.toThrow(
      /ENAMETOOLONG/,
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("copyFileAtomic", () => {
  it("copies through temp + rename and replaces a link at the destination", async () => {
    const dir = await fresh();
    await writeFile(path.join(dir, "src"), "data");
    await writeFile(path.join(dir, "victim"), "precious");
    await symlink(path.join(dir, "victim"), path.join(dir, "dst"));
    await copyFileAtomic(path.join(dir, "src"), path.join(dir, "dst"));
    expect(await readFile(path.join(dir, "dst"), "utf8")).toBe("data");
    expect(await readFile(path.join(dir, "victim"), "utf8")).toBe("precious");
  });

  it("does not read through a link at the source", async () => {
    const dir = await fresh();
    await writeFile(path.join(dir, "secret"), "secret");
    await symlink(path.join(dir, "secret"), path.join(dir, "src"));
    await expect(copyFileAtomic(path.join(dir, "src"), path.join(dir, "dst"))).rejects.toThrow(/ELOOP/);
  });
});

describe("replaceSymlink", () => {
  it("creates the link, then repoints it without touching what it pointed to", async () => {
    const dir = await fresh();
    const link = path.join(dir, "agentapi");
    await writeFile(path.join(dir, "old"), "old binary");
    await replaceSymlink(link, path.join(dir, "old"));
    expect(await readlink(link)).toBe(path.join(dir, "old"));
    await replaceSymlink(link, "/usr/local/bin/agentapi");
    expect(await readlink(link)).toBe("/usr/local/bin/agentapi");
    expect(await readFile(path.join(dir, "old"), "utf8")).toBe("old binary");
    expect((await readdir(dir)).sort()).toEqual(["agentapi", "old"]);
  });

  it("replaces a regular file at the name, and refuses a folder there", async () => {
    const dir = await fresh();
    await writeFile(path.join(dir, "file"), "x");
    await replaceSymlink(path.join(dir, "file"), "/bin/true");
    expect((await lstat(path.join(dir, "file"))).isSymbolicLink()).toBe(true);
    await mkdir(path.join(dir, "folder"));
    await expect(replaceSymlink(path.join(dir, "folder"), "/bin/true")).rejects.toThrow(/folder is a folder/);
    expect((await readdir(dir)).sort()).toEqual(["file", "folder"]);
  });
});

describe("checkWritableTarget", () => {
  it("accepts a missing path and a regular file", async () => {
    const dir = await fresh();
    await checkWritableTarget(path.join(dir, "missing"));
    await writeFile(path.join(dir, "file"), "");
    await checkWritableTarget(path.join(dir, "file"));
  });

  it("refuses a folder and a symlink with messages that say what to do", async () => {
    const dir = await fresh();
    await mkdir(path.join(dir, "folder"));
    await symlink("/etc/passwd", path.join(dir, "link"));
    await expect(checkWritableTarget(path.join(dir, "folder"))).rejects.toThrow(/is a folder.*Move the folder away/);
    await expect(checkWritableTarget(path.join(dir, "link"))).rejects.toThrow(/is a symbolic link.*Remove the link/);
    expect(await readlink(path.join(dir, "link"))).toBe("/etc/passwd");
  });
});

import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkWritableTarget, choosePrunable, copyFileAtomic, ensurePrivateDir, mkdirPrivate, pruneOldest, writeFileAtomic } from "../../src/safe-fs.js";

let root: string;
let n = 0;
const fresh = async () => {
  const dir = path.join(root, `case-${n++}`);
  await mkdir(dir);
  return dir;
};
const mode = async (p: string) => (await stat(p)).mode & 0o777;

const originalUmask = process.umask();
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "safe-fs-test-"));
});
afterEach(() => {
  process.umask(originalUmask);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe.each([0o000, 0o077, 0o022])("under umask %o", (umask) => {
  it("creates missing folders 0700 and files with exactly the requested mode", async () => {
    const base = await fresh();
    process.umask(umask);
    const dir = path.join(base, "a", "b", "c");
    expect(await mkdirPrivate(dir)).toEqual([path.join(base, "a"), path.join(base, "a", "b"), dir]);
    for (const p of [path.join(base, "a"), path.join(base, "a", "b"), dir]) expect(await mode(p)).toBe(0o700);
    await ensurePrivateDir(dir);

    await writeFileAtomic(path.join(dir, "private"), "x", { mode: 0o600 });
    expect(await mode(path.join(dir, "private"))).toBe(0o600);
    await writeFileAtomic(path.join(dir, "script"), "x", { mode: 0o700 });
    expect(await mode(path.join(dir, "script"))).toBe(0o700);
    await copyFileAtomic(path.join(dir, "script"), path.join(dir, "copy"));
    expect(await mode(path.join(dir, "copy"))).toBe(0o600);
  });
});

describe("ensurePrivateDir", () => {
  it("leaves an existing private folder as it is", async () => {
    const dir = await fresh();
    await chmod(dir, 0o750);
    await ensurePrivateDir(dir);
    expect(await mode(dir)).toBe(0o750);
  });

  it.each([0o770, 0o757, 0o777])("refuses a folder others can write to (mode %o), naming it and the fix", async (bits) => {
    const dir = await fresh();
    await chmod(dir, bits);
    await expect(ensurePrivateDir(dir)).rejects.toThrow(new RegExp(`${dir}.*can be written by other users.*chmod go-w`));
  });

  it("refuses a symbolic link, even to a good folder", async () => {
    const base = await fresh();
    await mkdir(path.join(base, "real"), { mode: 0o700 });
    await symlink(path.join(base, "real"), path.join(base, "link"));
    await expect(ensurePrivateDir(path.join(base, "link"))).rejects.toThrow(/link.*is a symbolic link/);
  });

  it("refuses a file where the folder should be", async () => {
    const base = await fresh();
    await writeFile(path.join(base, "file"), "");
    await expect(ensurePrivateDir(path.join(base, "file"))).rejects.toThrow(/exists and is not a folder/);
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
    await expect(writeFileAtomic(path.join(dir, "state.json"), "x", { mode: 0o600 })).rejects.toThrow(/state\.json is a folder/);
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
    await expect(writeFileAtomic(path.join(dir, "x".repeat(300)), "x", { mode: 0o600 })).rejects.toThrow(/ENAMETOOLONG/);
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

const P = "agentapi-state.json.set-aside-";
const t = (i: number) => `${P}2026-11-2${i}T10-00-00-000Z`;

describe("choosePrunable", () => {
  it.each([
    { name: "fewer than keep", names: [t(1), t(2)], keep: 5, out: [] },
    { name: "exactly keep", names: [t(1), t(2), t(3), t(4), t(5)], keep: 5, out: [] },
    { name: "oldest beyond keep, in any listing order", names: [t(3), t(1), t(6), t(2), t(5), t(4), t(7)], keep: 5, out: [t(2), t(1)] },
    { name: "keep 0 deletes all copies", names: [t(1), t(2)], keep: 0, out: [t(2), t(1)] },
    { name: "other files are never chosen", names: ["agentapi-state.json", `${P}notatime`, `x${P}2026-11-20T10-00-00-000Z`, t(1), t(2)], keep: 1, out: [t(1)] },
    { name: "ordering is by time across years and months", names: [`${P}2025-12-31T23-59-59-999Z`, `${P}2026-01-01T00-00-00-000Z`], keep: 1, out: [`${P}2025-12-31T23-59-59-999Z`] },
  ])("$name", ({ names, keep, out }) => {
    expect(choosePrunable(names, P, keep)).toEqual(out);
  });
});

describe("pruneOldest", () => {
  it("deletes the oldest regular copies and nothing else", async () => {
    const dir = await fresh();
    for (let i = 1; i <= 7; i++) await writeFile(path.join(dir, t(i)), String(i));
    await writeFile(path.join(dir, "agentapi-state.json"), "live");
    await mkdir(path.join(dir, `${P}2026-11-01T10-00-00-000Z`));
    const deleted = await pruneOldest(dir, P, 5);
    expect(deleted.sort()).toEqual([path.join(dir, t(1)), path.join(dir, t(2))]);
    expect((await readdir(dir)).sort()).toEqual([`${P}2026-11-01T10-00-00-000Z`, "agentapi-state.json", t(3), t(4), t(5), t(6), t(7)].sort());
  });
});

import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { choosePrunable, pruneOldest, setAside } from "../../../src/lib/set-aside.js";
import { scratchFolders } from "../scratch.js";

const fresh = scratchFolders("set-aside-test");

const P = "agentapi-state.json.set-aside-";
const t = (i: number) => `${P}2026-11-2${i}T10-00-00-000Z`;

describe("choosePrunable", () => {
  it.each([
    { name: "fewer than keep", names: [t(1), t(2)], keep: 5, out: [] },
    { name: "exactly keep", names: [t(1), t(2), t(3), t(4), t(5)], keep: 5, out: [] },
    {
      name: "oldest beyond keep, in any listing order",
      names: [t(3), t(1), t(6), t(2), t(5), t(4), t(7)],
      keep: 5,
      out: [t(2), t(1)],
    },
    { name: "keep 0 deletes all copies", names: [t(1), t(2)], keep: 0, out: [t(2), t(1)] },
    {
      name: "other files are never chosen",
      names: ["agentapi-state.json", `${P}notatime`, `x${P}2026-11-20T10-00-00-000Z`, t(1), t(2)],
      keep: 1,
      out: [t(1)],
    },
    {
      name: "ordering is by time across years and months",
      names: [`${P}2025-12-31T23-59-59-999Z`, `${P}2026-01-01T00-00-00-000Z`],
      keep: 1,
      out: [`${P}2025-12-31T23-59-59-999Z`],
    },
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
    expect((await readdir(dir)).sort()).toEqual(
      [`${P}2026-11-01T10-00-00-000Z`, "agentapi-state.json", t(3), t(4), t(5), t(6), t(7)].sort(),
    );
  });
});

describe("setAside", () => {
  it("renames the file to a name carrying the time, which the pruning then counts", async () => {
    const dir = await fresh();
    const file = path.join(dir, "agentapi-state.json");
    await writeFile(file, "chat 1");
    const first = await setAside(file, 1, new Date("2026-11-21T10:00:00.000Z"));
    expect(first).toEqual({ kept: path.join(dir, `${P}2026-11-21T10-00-00-000Z`), removed: [] });
    expect(await readFile(first.kept, "utf8")).toBe("chat 1");

    await writeFile(file, "chat 2");
    const second = await setAside(file, 1, new Date("2026-11-22T09:30:05.250Z"));
    expect(second).toEqual({ kept: path.join(dir, `${P}2026-11-22T09-30-05-250Z`), removed: [first.kept] });
    expect(await readdir(dir)).toEqual([`${P}2026-11-22T09-30-05-250Z`]);
  });
});

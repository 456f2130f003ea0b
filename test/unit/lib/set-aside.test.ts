import { mkdir, readdir, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { choosePrunable, pruneOldest, setAside, setAsideName } from "../../../src/lib/set-aside.js";
import { readText, scratchPaths } from "../scratch.js";

const folder = scratchPaths("set-aside-test");

const P = "agentapi-state.json.set-aside-";
const t = (i: number) => `${P}2026-11-2${i}T10-00-00-000Z`;

it.each([
  ["fewer than keep", [t(1), t(2)], 5, []],
  ["exactly keep", [1, 2, 3, 4, 5].map(t), 5, []],
  ["oldest beyond keep, in any listing order", [3, 1, 6, 2, 5, 4, 7].map(t), 5, [t(2), t(1)]],
  ["keep 0 deletes all copies", [t(1), t(2)], 0, [t(2), t(1)]],
  [
    "other files are never chosen",
    ["agentapi-state.json", `${P}notatime`, `x${P}2026-11-20T10-00-00-000Z`, t(1), t(2)],
    1,
    [t(1)],
  ],
  [
    "ordering is by time across years and months",
    [`${P}2025-12-31T23-59-59-999Z`, `${P}2026-01-01T00-00-00-000Z`],
    1,
    [`${P}2025-12-31T23-59-59-999Z`],
  ],
] as Array<[string, string[], number, string[]]>)("choosePrunable %s", (_, names, keep, out) => {
  expect(choosePrunable(names, P, keep)).toEqual(out);
});

it("pruneOldest deletes the oldest regular copies and nothing else", async () => {
  const at = await folder();
  for (let i = 1; i <= 7; i++) await writeFile(at(t(i)), String(i));
  await writeFile(at("agentapi-state.json"), "live");
  await mkdir(at(`${P}2026-11-01T10-00-00-000Z`));
  const deleted = await pruneOldest(at(), P, 5);
  expect(deleted.sort()).toEqual([at(t(1)), at(t(2))]);
  expect((await readdir(at())).sort()).toEqual(
    [`${P}2026-11-01T10-00-00-000Z`, "agentapi-state.json", t(3), t(4), t(5), t(6), t(7)].sort(),
  );
});

it("setAside renames the file to a name carrying the time, which the pruning then counts", async () => {
  const at = await folder();
  const file = at("agentapi-state.json");
  await writeFile(file, "chat 1");
  const first = setAsideName(file, new Date("2026-11-21T10:00:00.000Z"));
  expect(first).toBe(at(`${P}2026-11-21T10-00-00-000Z`));
  expect(await setAside(file, first, 1)).toEqual([]);
  expect(await readText(first)).toBe("chat 1");

  await writeFile(file, "chat 2");
  const second = setAsideName(file, new Date("2026-11-22T09:30:05.250Z"));
  expect(second).toBe(at(`${P}2026-11-22T09-30-05-250Z`));
  expect(await setAside(file, second, 1)).toEqual([first]);
  expect(await readdir(at())).toEqual([`${P}2026-11-22T09-30-05-250Z`]);
});

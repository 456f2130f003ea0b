import { copyFile, readFile, rename, stat, utimes, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { readVersionMemo, recalledVersion, VersionAsker, writeVersionMemo } from "../../../src/install/version-memo.js";
import { scratchFolders } from "../scratch.js";

const folder = scratchFolders("version-memo-test");
const ANSWER = "agentapi version 0.12.2\n";

/** A binary that notes each call in `calls` and prints ANSWER, and the memo file beside it. */
async function binary() {
  const dir = await folder();
  const bin = `${dir}/agentapi`;
  const calls = `${dir}/calls`;
  await writeFile(bin, `#!/bin/sh\necho "$*" >> '${calls}'\nprintf '${ANSWER.trim()}\\n'\n`, { mode: 0o755 });
  const called = async () => (await readFile(calls, "utf8").catch(() => "")).split("\n").filter(Boolean).length;
  return { dir, bin, memo: `${dir}/versions.json`, called };
}

/** One install's run: the memo read, `bin` asked, the memo written. */
async function install(memo: string, bin: string) {
  const versions = new VersionAsker(await readVersionMemo(memo), { PATH: process.env.PATH });
  const got = await versions.ask(bin);
  await writeVersionMemo(memo, versions.answers, versions.held);
  return got;
}

it("asks a binary once, and answers from the memo while the file is the one that answered", async () => {
  const { bin, memo, called } = await binary();
  expect(await install(memo, bin)).toEqual({ version: "0.12.2", output: ANSWER });
  expect(await install(memo, bin)).toEqual({ version: "0.12.2", output: ANSWER });
  expect(await called()).toBe(1);
  expect(await recalledVersion(await readVersionMemo(memo), bin)).toBe(ANSWER);
});

it("writes the memo only when it learned something", async () => {
  const { bin, memo } = await binary();
  await install(memo, bin);
  const written = await stat(memo, { bigint: true });
  await install(memo, bin);
  expect((await stat(memo, { bigint: true })).ino).toBe(written.ino);
});

it.each([
  ["written in place", async ({ bin }: { bin: string }) => writeFile(bin, `${await readFile(bin, "utf8")}# rebuilt\n`)],
  ["touched", ({ bin }: { bin: string }) => utimes(bin, new Date(1_000_000), new Date(1_000_000))],
  [
    "replaced by another file under its name",
    async ({ dir, bin }: { dir: string; bin: string }) => {
      await copyFile(bin, `${dir}/other`);
      await rename(`${dir}/other`, bin);
    },
  ],
])("asks again once the binary is %s", async (_, change) => {
  const files = await binary();
  await install(files.memo, files.bin);
  await change(files);
  expect(await recalledVersion(await readVersionMemo(files.memo), files.bin)).toBeUndefined();
  await install(files.memo, files.bin);
  expect(await files.called()).toBe(2);
});

it("keeps the answer of a binary this process renamed, under its new name", async () => {
  const { dir, bin, memo, called } = await binary();
  const versions = new VersionAsker([], { PATH: process.env.PATH });
  await versions.ask(bin);
  await rename(bin, `${dir}/moved`);
  await versions.renamed(bin, `${dir}/moved`);
  await writeVersionMemo(memo, versions.answers, versions.held);
  expect(await recalledVersion(await readVersionMemo(memo), `${dir}/moved`)).toBe(ANSWER);
  expect(await recalledVersion(await readVersionMemo(memo), bin)).toBeUndefined();
  expect(await called()).toBe(1);
});

it("remembers nothing for another path, a failed answer, or a missing or broken memo", async () => {
  const { dir, bin, memo } = await binary();
  await install(memo, bin);
  expect(await recalledVersion(await readVersionMemo(memo), `${dir}/elsewhere`)).toBeUndefined();
  expect(await readVersionMemo(`${dir}/none.json`)).toEqual([]);
  await writeFile(memo, "{not json");
  expect(await readVersionMemo(memo)).toEqual([]);
  await writeFile(memo, JSON.stringify({ answers: [{ bin, output: ANSWER }] }));
  expect(await readVersionMemo(memo)).toEqual([]);
  await writeFile(bin, "#!/bin/sh\nexit 1\n");
  expect(await install(memo, bin)).toEqual({ version: null, output: null });
  expect(await readVersionMemo(memo)).toEqual([]);
});

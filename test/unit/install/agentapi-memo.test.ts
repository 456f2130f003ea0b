import { copyFile, rename, utimes, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { rememberAgentapiVersion, rememberedAgentapiVersion } from "../../../src/install/agentapi-memo.js";
import { scratchFolders } from "../scratch.js";

const folder = scratchFolders("agentapi-memo-test");
const ANSWER = "agentapi version 0.12.2\n";

/** A binary and the memo file beside it, the answer remembered for the binary as it is now. */
async function remembered() {
  const dir = await folder();
  const bin = `${dir}/agentapi`;
  const memo = `${dir}/agentapi-version.json`;
  await writeFile(bin, "#!/bin/sh\n", { mode: 0o755 });
  await rememberAgentapiVersion(memo, bin, ANSWER);
  return { dir, bin, memo };
}

it("gives the answer back while the binary is the one that gave it", async () => {
  const { bin, memo } = await remembered();
  expect(await rememberedAgentapiVersion(memo, bin)).toBe(ANSWER);
});

it.each([
  ["written in place", ({ bin }: { bin: string }) => writeFile(bin, "#!/bin/sh\necho other\n")],
  ["touched", ({ bin }: { bin: string }) => utimes(bin, new Date(1_000_000), new Date(1_000_000))],
  [
    "replaced by another file under its name",
    async ({ dir, bin }: { dir: string; bin: string }) => {
      await copyFile(bin, `${dir}/other`);
      await rename(`${dir}/other`, bin);
    },
  ],
])("forgets it once the binary is %s", async (_, change) => {
  const files = await remembered();
  await change(files);
  expect(await rememberedAgentapiVersion(files.memo, files.bin)).toBeUndefined();
});

it("forgets it for another path, a missing or broken memo, and when the install had no answer", async () => {
  const { dir, bin, memo } = await remembered();
  expect(await rememberedAgentapiVersion(memo, `${dir}/elsewhere`)).toBeUndefined();
  expect(await rememberedAgentapiVersion(`${dir}/none.json`, bin)).toBeUndefined();
  await writeFile(memo, "{not json");
  expect(await rememberedAgentapiVersion(memo, bin)).toBeUndefined();
  await rememberAgentapiVersion(memo, bin, ANSWER);
  await rememberAgentapiVersion(memo, bin, undefined);
  expect(await rememberedAgentapiVersion(memo, bin)).toBeUndefined();
});

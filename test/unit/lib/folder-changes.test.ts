import { rename, writeFile } from "node:fs/promises";
import { it } from "vitest";
import { watchFolders } from "../../../src/lib/folder-changes.js";
import { scratchDir } from "../scratch.js";

const at = scratchDir("folder-changes-test");

// A wait that the event did not end would run into the test's own timeout
// (vitest's 5 s), far short of this bound: so these tests fail rather than pass late.
const NEVER_MS = 3_600_000;

it("ends a wait when a file in a watched folder is replaced by a rename", async () => {
  const changes = watchFolders([at()]);
  try {
    const waiting = changes.wait(NEVER_MS);
    await writeFile(at("state.json.tmp"), "{}");
    await rename(at("state.json.tmp"), at("state.json"));
    await waiting;
  } finally {
    changes.close();
  }
});

it("leaves a folder that cannot be watched to the interval", async () => {
  const changes = watchFolders([at("missing"), at()]);
  try {
    await changes.wait(20);
  } finally {
    changes.close();
  }
});

it("close ends a pending wait", async () => {
  const changes = watchFolders([at()]);
  const waiting = changes.wait(NEVER_MS);
  changes.close();
  await waiting;
});

import { rename, writeFile } from "node:fs/promises";
import { beforeAll, describe, it } from "vitest";
import { watchFolders } from "../../../src/lib/folder-changes.js";
import { scratchPaths } from "../scratch.js";

const folder = scratchPaths("folder-changes-test");
let at: Awaited<ReturnType<typeof folder>>;
beforeAll(async () => {
  at = await folder();
});

// A wait that the event did not end would run into the test's own timeout
// (vitest's 5 s), far short of this bound: so these tests fail rather than pass late.
const NEVER_MS = 3_600_000;

describe("watchFolders", () => {
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
});

import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { watchFolders } from "../../../src/lib/folder-changes.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "folder-changes-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// A wait that the event did not end would run into the test's own timeout
// (vitest's 5 s), far short of this bound: so these tests fail rather than pass late.
const NEVER_MS = 3_600_000;

describe("watchFolders", () => {
  it("ends a wait when a file in a watched folder is replaced by a rename", async () => {
    const changes = watchFolders([dir]);
    try {
      const waiting = changes.wait(NEVER_MS);
      await writeFile(path.join(dir, "state.json.tmp"), "{}");
      await rename(path.join(dir, "state.json.tmp"), path.join(dir, "state.json"));
      await waiting;
    } finally {
      changes.close();
    }
  });

  it("leaves a folder that cannot be watched to the interval", async () => {
    const changes = watchFolders([path.join(dir, "missing"), dir]);
    try {
      await changes.wait(20);
    } finally {
      changes.close();
    }
  });

  it("close ends a pending wait", async () => {
    const changes = watchFolders([dir]);
    const waiting = changes.wait(NEVER_MS);
    changes.close();
    await waiting;
  });
});

import { rename, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { watchFolders } from "../../../src/lib/folder-changes.js";
import { scratchDir } from "../scratch.js";

const at = scratchDir("folder-changes-test");

// A wait that no event ends would run into the test's own timeout (vitest's
// 5 s), far short of this bound: such a test fails rather than passes late.
const NEVER_MS = 3_600_000;

it("ends a wait when a file in a watched folder is replaced by a rename", async () => {
  const changes = watchFolders([at()]);
  try {
    const waiting = changes.wait(NEVER_MS);
    await writeFile(at("state.json.tmp"), "{}");
    await rename(at("state.json.tmp"), at("state.json"));
    expect(await waiting).toBe("changed");
  } finally {
    changes.close();
  }
});

it("a change made while no wait runs still ends the next wait", async () => {
  const changes = watchFolders([at()]);
  try {
    const first = changes.wait(NEVER_MS);
    await writeFile(at("between.json"), "1");
    expect(await first).toBe("changed");
    // Written with no wait pending: whether inotify reports it before or
    // after the next wait begins, that wait ends on it.
    await writeFile(at("between.json"), "2");
    expect(await changes.wait(NEVER_MS)).toBe("changed");
  } finally {
    changes.close();
  }
});

it("leaves a folder that cannot be watched to the bound, and still watches the others", async () => {
  const changes = watchFolders([at("missing"), at()]);
  try {
    expect(await changes.wait(20)).toBe("timeout");
    const waiting = changes.wait(NEVER_MS);
    await writeFile(at("other.json"), "{}");
    expect(await waiting).toBe("changed");
  } finally {
    changes.close();
  }
});

it("close ends a pending wait", async () => {
  const changes = watchFolders([at()]);
  const waiting = changes.wait(NEVER_MS);
  changes.close();
  expect(await waiting).toBe("closed");
});

// The lifecycle lock and the stop count (lifecycle-lock.ts, stop-request.ts),
// with several real processes at once: the bundle of lifecycle-driver.ts (drive.ts).

import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { acquireLifecycleLock } from "../../../src/lifecycle/lock.js";
import { recordStop, stopCount, stoppedSince } from "../../../src/lifecycle/stop-request.js";
import { SUPERVISOR_ARG } from "../../../src/supervisor/process.js";
import { scratchFolders } from "../scratch.js";
import { driverProcesses } from "./drive.js";

const scratch = scratchFolders("lifecycle-test");
const drive = driverProcesses(scratch);

const noWait = { patienceMs: () => 0 };

describe("the lifecycle lock", () => {
  it("one holder at a time; a waiter hears who holds it", async () => {
    const moduleDir = await scratch();
    const go = path.join(moduleDir, "go");
    await writeFile(go, "");
    const holder = drive("hold", moduleDir, go, "stop");
    expect(await holder.outcome).toEqual({ held: true });

    expect(await acquireLifecycleLock(moduleDir, "launch", noWait)).toEqual({ busy: `stop ${holder.child.pid}` });
    holder.child.stdin?.end();
    await new Promise((resolve) => holder.child.once("exit", resolve));
    const mine = await acquireLifecycleLock(moduleDir, "launch", noWait);
    expect("lock" in mine).toBe(true);
    if ("lock" in mine) await mine.lock.release();
  });

  it("a holder killed with SIGKILL blocks nobody: the next one gets it at once", async () => {
    const moduleDir = await scratch();
    const go = path.join(moduleDir, "go");
    await writeFile(go, "");
    const holder = drive("hold", moduleDir, go);
    expect(await holder.outcome).toEqual({ held: true });
    holder.child.kill("SIGKILL");
    await new Promise((resolve) => holder.child.once("exit", resolve));
    const mine = await acquireLifecycleLock(moduleDir, "launch", noWait);
    expect("lock" in mine).toBe(true);
    if ("lock" in mine) await mine.lock.release();
  });

  it("a waiter gives up at an abort reason", async () => {
    const moduleDir = await scratch();
    const first = await acquireLifecycleLock(moduleDir, "stop", noWait);
    expect("lock" in first).toBe(true);
    const waiting = await acquireLifecycleLock(moduleDir, "launch", {
      patienceMs: () => 60_000,
      abort: () => "standing down",
    });
    expect(waiting).toEqual({ aborted: "standing down" });
    if ("lock" in first) await first.lock.release();
  });

  it("each module folder has its own lock, named by a private random id", async () => {
    const [one, two] = [await scratch(), await scratch()];
    const a = await acquireLifecycleLock(one, "stop", noWait);
    const b = await acquireLifecycleLock(two, "stop", noWait);
    expect("lock" in a && "lock" in b).toBe(true);
    const id = await readFile(path.join(one, "lifecycle-lock-id"), "utf8");
    expect(id).toMatch(/^[0-9a-f]{32}\n$/);
    expect(id).not.toBe(await readFile(path.join(two, "lifecycle-lock-id"), "utf8"));
    if ("lock" in a) await a.lock.release();
    if ("lock" in b) await b.lock.release();
  });

  it("without the module folder there is nothing to lock", async () => {
    expect(await acquireLifecycleLock(path.join(await scratch(), "missing"), "stop", noWait)).toEqual({
      noFolder: true,
    });
  });
});

describe("the supervisor's claim", () => {
  // After a container restart $HOME persists, and with it a supervisor.pid
  // naming a process that is gone; two starts then meet it at once.
  it("several supervisors meeting a stale supervisor.pid at once: exactly one claims it, every time", async () => {
    for (let round = 0; round < 8; round++) {
      const moduleDir = await scratch();
      const go = path.join(moduleDir, "go");
      await writeFile(path.join(moduleDir, "supervisor.pid"), "999999999\n");
      // Each has a supervisor's command line, so the others see it as one once it holds the file.
      const claimers = Array.from({ length: 4 }, () => drive("claim", moduleDir, go, "-", SUPERVISOR_ARG, moduleDir));
      await writeFile(go, "");
      const outcomes = await Promise.all(claimers.map((c) => c.outcome));
      const winners = claimers.filter((_, i) => "claimed" in (outcomes[i] as object));
      expect(winners, `round ${round}: ${JSON.stringify(outcomes)}`).toHaveLength(1);
      const pidFile = await readFile(path.join(moduleDir, "supervisor.pid"), "utf8");
      expect(pidFile).toBe(`${winners[0]?.child.pid}\n`);
      for (const c of claimers) c.child.stdin?.end();
    }
  }, 120_000);
});

describe("the stop count", () => {
  it("0 before the first stop, one more for each stop, and nothing without the folder", async () => {
    const moduleDir = await scratch();
    expect(await stopCount(moduleDir)).toBe(0);
    const seen = await stopCount(moduleDir);
    expect(await recordStop(moduleDir)).toBe(1);
    expect(await stoppedSince(moduleDir, seen)).toBe(true);
    expect(await recordStop(moduleDir)).toBe(2);
    expect(await stoppedSince(moduleDir, 2)).toBe(false);
    expect(await readdir(moduleDir)).toEqual(["stop-count-2"]);
    const missing = path.join(moduleDir, "missing");
    expect(await recordStop(missing)).toBeNull();
    expect(await stopCount(missing)).toBe(0);
  });

  it("is kept in a name, not in data, so a full disk does not lose it: the file stays empty", async () => {
    const moduleDir = await scratch();
    await recordStop(moduleDir);
    await recordStop(moduleDir);
    expect(await readFile(path.join(moduleDir, "stop-count-2"), "utf8")).toBe("");
  });

  it("stops counting at the same time lose no count", async () => {
    const moduleDir = await scratch();
    const go = path.join(moduleDir, "go");
    const counters = Array.from({ length: 6 }, () => drive("count", moduleDir, go, "5"));
    await writeFile(go, "");
    await Promise.all(counters.map((c) => c.outcome));
    expect(await stopCount(moduleDir)).toBe(30);
  }, 60_000);

  it("a count taken after a stop is not held back by it, whatever the clocks said", async () => {
    // The count has no time in it: a start that read it after the stop sees no stop.
    const moduleDir = await scratch();
    await mkdir(moduleDir, { recursive: true });
    await recordStop(moduleDir);
    const seen = await stopCount(moduleDir);
    expect(await stoppedSince(moduleDir, seen)).toBe(false);
  });
});

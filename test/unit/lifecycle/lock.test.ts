// The lifecycle lock and the stop count (src/lifecycle/lock.ts and
// stop-request.ts), with several real processes at once: lifecycle-driver.ts,
// bundled and run by drive.ts.

import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, readlink, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { acquireLifecycleLock } from "../../../src/lifecycle/lock.js";
import { recordStop, stopCount, stoppedSince } from "../../../src/lifecycle/stop-request.js";
import { SUPERVISOR_ARG } from "../../../src/supervisor/process.js";
import { readText, scratchFolders } from "../scratch.js";
import { driverProcesses } from "./drive.js";

const scratch = scratchFolders("lifecycle-test");
const drive = driverProcesses(scratch);

const noWait = { patienceMs: () => 0 };
/** Takes the lock at once, which must be free, and gives it back. */
async function takeFree(moduleDir: string): Promise<void> {
  const mine = await acquireLifecycleLock(moduleDir, "launch", noWait);
  expect("lock" in mine).toBe(true);
  if ("lock" in mine) await mine.lock.release();
}

describe("the lifecycle lock", () => {
  /** A driver process holding the lock of a fresh module folder. */
  async function held(...as: string[]) {
    const moduleDir = await scratch();
    await writeFile(path.join(moduleDir, "go"), "");
    const holder = drive("hold", moduleDir, path.join(moduleDir, "go"), ...as);
    expect(await holder.outcome).toEqual({ held: true });
    return { moduleDir, holder };
  }

  it("one holder at a time; a waiter hears who holds it", async () => {
    const { moduleDir, holder } = await held("stop");

    expect(await acquireLifecycleLock(moduleDir, "launch", noWait)).toMatchObject({ busy: `stop ${holder.child.pid}` });
    holder.child.stdin?.end();
    await new Promise((resolve) => holder.child.once("exit", resolve));
    await takeFree(moduleDir);
  });

  it("a holder killed with SIGKILL blocks nobody: the next one gets it at once", async () => {
    const { moduleDir, holder } = await held();
    holder.child.kill("SIGKILL");
    await new Promise((resolve) => holder.child.once("exit", resolve));
    await takeFree(moduleDir);
  });

  it("a waiter gives up at an abort reason", async () => {
    const moduleDir = await scratch();
    const first = await acquireLifecycleLock(moduleDir, "stop", noWait);
    expect("lock" in first).toBe(true);
    const waiting = await acquireLifecycleLock(moduleDir, "launch", { patienceMs: () => 6e4, abort: () => "no" });
    expect(waiting).toEqual({ aborted: "no" });
    if ("lock" in first) await first.lock.release();
  });

  it("each module folder has its own lock, in a folder of its own only this user can enter", async () => {
    const [one, two] = [await scratch(), await scratch()];
    const a = await acquireLifecycleLock(one, "stop", noWait);
    const b = await acquireLifecycleLock(two, "stop", noWait);
    expect("lock" in a && "lock" in b).toBe(true);
    for (const dir of [one, two]) {
      const info = await stat(path.join(dir, "lifecycle-lock"));
      expect(info.mode & 0o777).toBe(0o700);
      expect(info.uid).toBe(process.getuid?.());
    }
    for (const held of [a, b]) if ("lock" in held) await held.lock.release();
  });

  it("works in a module folder whose path is longer than a socket address can be", async () => {
    const moduleDir = path.join(await scratch(), "d".repeat(120), "e".repeat(120));
    await mkdir(moduleDir, { recursive: true });
    const first = await acquireLifecycleLock(moduleDir, "stop", noWait);
    expect("lock" in first).toBe(true);
    expect(await acquireLifecycleLock(moduleDir, "launch", noWait)).toMatchObject({ busy: `stop ${process.pid}` });
    if ("lock" in first) await first.lock.release();
    await takeFree(moduleDir);
  });

  it("a holder that waited past its patience says how long it waited", async () => {
    const { moduleDir, holder } = await held("stop");
    const outcome = await acquireLifecycleLock(moduleDir, "stop", { patienceMs: () => 100 });
    expect(outcome).toMatchObject({ busy: `stop ${holder.child.pid}` });
    expect((outcome as { waitedMs: number }).waitedMs).toBeGreaterThanOrEqual(100);
    holder.child.stdin?.end();
  });

  it("without the module folder there is nothing to lock", async () => {
    const missing = path.join(await scratch(), "missing");
    expect(await acquireLifecycleLock(missing, "stop", noWait)).toEqual({ noFolder: true });
  });
});

/** The inodes of this process's sockets (/proc/self/fd). */
async function ownSockets(): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const fd of await readdir("/proc/self/fd")) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  return inodes;
}

// Another user of the machine, as the review found it: it reads the lock's
// addresses in /proc/net/unix, which every uid can read, and once the lock is
// free it binds them and answers as a stop ("stop 1"), which made a start wait
// 15 minutes and a stop most of its grace.
const SQUATTER = `
import { createServer } from "node:net";
import { readFileSync } from "node:fs";
const inodes = process.argv.slice(1);
const seen = readFileSync("/proc/net/unix", "utf8").split("\\n").slice(1)
  .map((line) => line.trim().split(/\\s+/))
  .filter((f) => f.length >= 8 && inodes.includes(f[6]))
  .map((f) => f[7]);
process.stdout.write(JSON.stringify({ seen }) + "\\n");
process.stdin.once("data", async () => {
  const bound = [];
  for (const name of seen) {
    const address = name.startsWith("@") ? name.replaceAll("@", "\\0") : name;
    const ok = await new Promise((resolve) => {
      const server = createServer((s) => s.end("stop 1\\n"));
      server.once("error", () => resolve(false));
      server.listen({ path: address, exclusive: true }, () => resolve(true));
    });
    if (ok) bound.push(name);
  }
  process.stdout.write(JSON.stringify({ bound }) + "\\n");
});
`;

describe("another user of the machine", () => {
  it("can neither take nor fake the lock, though it sees the lock's addresses", async () => {
    const moduleDir = await scratch();
    const before = await ownSockets();
    const first = await acquireLifecycleLock(moduleDir, "stop", noWait);
    if (!("lock" in first)) throw new Error(`the lock was not free: ${JSON.stringify(first)}`);
    const inodes = [...(await ownSockets())].filter((inode) => !before.has(inode));
    const unix = await readFile("/proc/net/unix", "utf8");
    const addresses = unix
      .split("\n")
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => inodes.includes(f[6] ?? ""))
      .map((f) => f[7] ?? "(unnamed)");
    expect(addresses.length).toBeGreaterThan(0);
    // A path, not an abstract name ("@..."): another uid cannot bind a path in a folder it cannot enter.
    for (const address of addresses) expect(address).toMatch(/^\//);
    // Switching uid needs root, as the tests run here.
    if (process.getuid?.() !== 0) {
      await first.lock.release();
      return;
    }
    const squatter = spawn(
      "setpriv",
      [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        process.execPath,
        "--input-type=module",
        "-e",
        SQUATTER,
        ...inodes,
      ],
      { cwd: "/", stdio: ["pipe", "pipe", "inherit"] },
    );
    try {
      const lines: string[] = [];
      let waiting: (() => void) | undefined;
      let text = "";
      squatter.stdout?.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        const parts = text.split("\n");
        text = parts.pop() ?? "";
        lines.push(...parts);
        waiting?.();
      });
      const line = async (n: number) => {
        while (lines.length <= n) await new Promise<void>((resolve) => (waiting = resolve));
        return JSON.parse(lines[n] ?? "");
      };
      expect((await line(0)).seen).toEqual(addresses);
      await first.lock.release();
      squatter.stdin?.write("go\n");
      await line(1);
      const next = await acquireLifecycleLock(moduleDir, "launch", noWait);
      expect(next).toHaveProperty("lock");
      if ("lock" in next) await next.lock.release();
    } finally {
      squatter.kill("SIGKILL");
    }
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
      const pidFile = await readText(path.join(moduleDir, "supervisor.pid"));
      expect(pidFile).toBe(`${winners[0]?.child.pid}\n`);
      for (const c of claimers) c.child.stdin?.end();
    }
  }, 120_000);
});

describe("the stop count", () => {
  // Kept in a name, not in data, so a full disk does not lose it: the file stays empty. The count has no
  // time in it, so a start that read it after a stop is not held back by that stop, whatever the clocks said.
  it("0 before the first stop, one more for each stop, and nothing without the folder", async () => {
    const moduleDir = await scratch();
    expect(await stopCount(moduleDir)).toBe(0);
    const seen = await stopCount(moduleDir);
    expect(await recordStop(moduleDir)).toBe(1);
    expect(await stoppedSince(moduleDir, seen)).toBe(true);
    expect(await recordStop(moduleDir)).toBe(2);
    expect(await stoppedSince(moduleDir, 2)).toBe(false);
    expect(await readdir(moduleDir)).toEqual(["stop-count-2"]);
    expect(await readText(path.join(moduleDir, "stop-count-2"))).toBe("");
    const missing = path.join(moduleDir, "missing");
    expect(await recordStop(missing)).toBeNull();
    expect(await stopCount(missing)).toBe(0);
  });

  it("stops counting at the same time lose no count", async () => {
    const moduleDir = await scratch();
    const go = path.join(moduleDir, "go");
    const counters = Array.from({ length: 6 }, () => drive("count", moduleDir, go, "5"));
    await writeFile(go, "");
    await Promise.all(counters.map((c) => c.outcome));
    expect(await stopCount(moduleDir)).toBe(30);
  }, 60_000);
});

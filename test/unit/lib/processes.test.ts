import { lstat, symlink, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { pollUntil } from "../../../src/lib/poll.js";
import {
  childPids,
  isRunning,
  killTree,
  parentPid,
  parsePid,
  parseStat,
  readCmdline,
  readPidFile,
  removePidFile,
  sessionOf,
  startedWith,
  waitForExit,
  writePidFile,
} from "../../../src/lib/processes.js";
import { exitedPid, liveChildren } from "../children.js";
import { modeOf, readText, scratchDir } from "../scratch.js";

const at = scratchDir("processes-test");
const start = liveChildren();

it.each([
  ["1234\n", 1234],
  ["abc", null],
  ["", null],
  ["1", null],
  ["12 34", null],
])("parsePid %j -> %j", (text, pid) => expect(parsePid(text)).toBe(pid));

it.each([
  ["a plain line", "4242 (sleep) S 4000 4242 4001 0 -1", { state: "S", ppid: 4000, session: 4001 }],
  ["a zombie", "77 (sh) Z 1 77 76 0 -1", { state: "Z", ppid: 1, session: 76 }],
  ["a command name with spaces and parentheses", "9 (a) b (c) R 8 9 7 0 -1", { state: "R", ppid: 8, session: 7 }],
  ["the first process, whose parent is 0", "1 (init) S 0 1 1 0 -1", { state: "S", ppid: 0, session: 1 }],
  ["an empty read (the process is gone)", "", null],
  ["no command name", "12 S 1 12", null],
  ["a line cut after the name", "12 (x) ", null],
  ["a line cut before the session", "12 (x) S 1 12", null],
])("parseStat %s", (_, text, out) => {
  expect(parseStat(text)).toEqual(out);
});

describe("a live process tree", () => {
  it("finds children, tells a zombie from a running process, kills the tree and sees it exit", async () => {
    // The forked child exits at once and perl never reaps it, so it stays a zombie.
    const script = "if (fork() == 0) { exit 0 } sleep 60";
    const parent = await start("perl", ["-e", script]);
    const zombie = async () => {
      for (const pid of await childPids(parent))
        if ((await readText(`/proc/${pid}/stat`).catch(() => "")).includes(") Z ")) return pid;
    };
    const found = await pollUntil(zombie, { timeoutMs: 10_000, intervalMs: 10 });
    if (!("value" in found)) throw new Error("perl's child did not become a zombie");
    const zombiePid = found.value;

    expect(await readCmdline(parent)).toEqual(["perl", "-e", script]);
    expect(await readCmdline(zombiePid)).toBeNull();
    expect(await parentPid(zombiePid)).toBe(parent);
    expect([await isRunning(parent), await isRunning(zombiePid)]).toEqual([true, false]);
    expect([await waitForExit(zombiePid, 0), await waitForExit(parent, 0)]).toEqual([true, false]);

    expect(await killTree(parent)).toEqual([zombiePid]);
    expect(await waitForExit(parent, 10_000)).toBe(true);
    expect(await isRunning(parent)).toBe(false);
  });

  it("waitForExit sees an exit after its first quick checks, and gives up at a bound that spans both", async () => {
    const late = await start("sleep", ["0.6"]);
    expect(await waitForExit(late, 10_000)).toBe(true);
    expect(await isRunning(late)).toBe(false);
    const lasting = await start("sleep", ["60"]);
    expect(await waitForExit(lasting, 400)).toBe(false);
    expect(await isRunning(lasting)).toBe(true);
  });

  it("answers for a process that has gone", async () => {
    const gone = await exitedPid();
    expect([await isRunning(gone), await parentPid(gone), await readCmdline(gone)]).toEqual([false, null, null]);
  });
});

it("sessionOf: a process in a session of its own leads it, its child is in it, a gone one has none", async () => {
  const leader = await start("setsid", ["sh", "-c", "sleep 60 & wait"]);
  const child = await pollUntil(async () => (await childPids(leader))[0], { timeoutMs: 10_000, intervalMs: 10 });
  if (!("value" in child)) throw new Error("the session leader started no child");
  expect([await sessionOf(leader), await sessionOf(child.value)]).toEqual([leader, leader]);
  expect(await sessionOf(process.pid)).not.toBe(leader);
  expect(await sessionOf(await exitedPid())).toBeNull();
});

describe("startedWith: the processes started with an environment entry", () => {
  it("names each live process whose environment holds it, and no other", async () => {
    const entry = `PROCESSES_TEST_MARK=${process.pid}-${Date.now()}`;
    const [name, value] = entry.split("=") as [string, string];
    const marked = await start("env", [`${name}=${value}`, "sleep", "60"]);
    const near = await start("env", [`${name}=${value}x`, "sleep", "60"]);
    const bare = await start("sleep", ["60"]);
    expect(await startedWith(entry)).toEqual([marked]);
    expect(await isRunning(near)).toBe(true);
    expect(await isRunning(bare)).toBe(true);
  });
});

describe("PID files", () => {
  it("writes the PID 0600, replacing a link planted at the name instead of writing through it", async () => {
    const victim = at("victim");
    const file = at("linked.pid");
    await writeFile(victim, "precious");
    await symlink(victim, file);
    await writePidFile(file, 4321);
    expect(await readText(victim)).toBe("precious");
    expect((await lstat(file)).isFile()).toBe(true);
    expect(await modeOf(file)).toBe(0o600);
    expect([await readText(file), await readPidFile(file)]).toEqual(["4321\n", 4321]);
  });

  it("removes the file only while it names the given PID", async () => {
    const file = at("owned.pid");
    await writeFile(file, "5000\n");
    await removePidFile(file, 5001);
    expect(await readText(file)).toBe("5000\n");
    await removePidFile(file, 5000);
    expect(await readPidFile(file)).toBeNull();
    await removePidFile(file, 5000);
  });
});

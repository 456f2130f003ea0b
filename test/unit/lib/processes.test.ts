import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { lstat, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { pollUntil } from "../../../src/lib/poll.js";
import {
  childPids,
  findRunningAgentapi,
  isAgentapiServer,
  isRunning,
  killTree,
  parentPid,
  parsePid,
  parseStat,
  readCmdline,
  readPidFile,
  removePidFile,
  waitForExit,
  writePidFile,
} from "../../../src/lib/processes.js";
import { scratchPaths } from "../scratch.js";

const folder = scratchPaths("processes-test");
let at: Awaited<ReturnType<typeof folder>>;
const children: ChildProcess[] = [];
beforeAll(async () => {
  at = await folder();
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

async function start(file: string, args: string[], argv0?: string): Promise<number> {
  const child = spawn(file, args, { stdio: "ignore", argv0 });
  children.push(child);
  await once(child, "spawn");
  return child.pid as number;
}

async function exitedPid(): Promise<number> {
  const child = spawn("/bin/true", [], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid as number;
}

describe("isAgentapiServer", () => {
  it.each([
    ["agentapi server on the expected port", "/m/bin/agentapi server --type goose --port 4000 -- goose", 4000, true],
    ["another port", "/m/bin/agentapi server --port 4001", 4000, false],
    ["another program", "sleep 1000", 4000, false],
    ["another program", "/usr/bin/python3 agentapi server", 4000, false],
    ["the word server after --", "agentapi attach -- server", 3284, false],
    ["AgentAPI's default port when none is given", "agentapi server -- goose", 3284, true],
  ] as const)("%s: %s", (_, argv, port, is) => {
    expect(isAgentapiServer(argv.split(" "), port)).toBe(is);
  });
});

describe("parsePid", () => {
  it.each([
    ["1234\n", 1234],
    ["abc", null],
    ["", null],
    ["1", null],
    ["12 34", null],
  ])("%j -> %j", (text, pid) => expect(parsePid(text)).toBe(pid));
});

describe("parseStat", () => {
  it.each([
    ["a plain line", "4242 (sleep) S 4000 4242 4000 0 -1", { state: "S", ppid: 4000 }],
    ["a zombie", "77 (sh) Z 1 77 77 0 -1", { state: "Z", ppid: 1 }],
    ["a command name with spaces and parentheses", "9 (a) b (c) R 8 9 9 0 -1", { state: "R", ppid: 8 }],
    ["the first process, whose parent is 0", "1 (init) S 0 1 1 0 -1", { state: "S", ppid: 0 }],
    ["an empty read (the process is gone)", "", null],
    ["no command name", "12 S 1 12", null],
    ["a line cut after the name", "12 (x) ", null],
  ])("%s", (_, text, out) => {
    expect(parseStat(text)).toEqual(out);
  });
});

describe("a live process tree", () => {
  it("finds children, tells a zombie from a running process, kills the tree and sees it exit", async () => {
    // The forked child exits at once and perl never reaps it, so it stays a zombie.
    const script = "if (fork() == 0) { exit 0 } sleep 60";
    const parent = await start("perl", ["-e", script]);
    const zombie = async () => {
      for (const pid of await childPids(parent))
        if ((await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")).includes(") Z ")) return pid;
    };
    const found = await pollUntil(zombie, { timeoutMs: 10_000, intervalMs: 10 });
    if (!("value" in found)) throw new Error("perl's child did not become a zombie");
    const zombiePid = found.value;

    expect(await readCmdline(parent)).toEqual(["perl", "-e", script]);
    expect(await readCmdline(zombiePid)).toBeNull();
    expect(await parentPid(zombiePid)).toBe(parent);
    expect(await isRunning(parent)).toBe(true);
    expect(await isRunning(zombiePid)).toBe(false);
    expect(await waitForExit(zombiePid, 0)).toBe(true);
    expect(await waitForExit(parent, 0)).toBe(false);

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
    expect(await isRunning(gone)).toBe(false);
    expect(await parentPid(gone)).toBeNull();
    expect(await readCmdline(gone)).toBeNull();
  });
});

describe("PID files", () => {
  it("writes the PID 0600, replacing a link planted at the name instead of writing through it", async () => {
    const victim = at("victim");
    const file = at("linked.pid");
    await writeFile(victim, "precious");
    await symlink(victim, file);
    await writePidFile(file, 4321);
    expect(await readFile(victim, "utf8")).toBe("precious");
    expect((await lstat(file)).isFile()).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toBe("4321\n");
    expect(await readPidFile(file)).toBe(4321);
  });

  it("removes the file only while it names the given PID", async () => {
    const file = at("owned.pid");
    await writeFile(file, "5000\n");
    await removePidFile(file, 5001);
    expect(await readFile(file, "utf8")).toBe("5000\n");
    await removePidFile(file, 5000);
    expect(await readPidFile(file)).toBeNull();
    await removePidFile(file, 5000);
  });
});

describe("findRunningAgentapi", () => {
  it("reports a missing or unreadable PID file as no file", async () => {
    const none = { status: "no-file", pid: null };
    expect(await findRunningAgentapi(at("missing.pid"), 4000)).toEqual(none);
    await writeFile(at("garbage.pid"), "not a pid\n");
    expect(await findRunningAgentapi(at("garbage.pid"), 4000)).toEqual(none);
  });

  it("tells a gone process, another program and an agentapi server on another port from ours", async () => {
    const file = at("agentapi.pid");
    const gone = await exitedPid();
    await writeFile(file, `${gone}\n`);
    expect(await findRunningAgentapi(file, 4000)).toEqual({ status: "dead", pid: gone });

    await writeFile(file, `${process.pid}\n`);
    expect(await findRunningAgentapi(file, 4000)).toEqual({ status: "foreign", pid: process.pid });

    // A stand-in whose command line reads like `agentapi server --port 4000`.
    const args = ["-e", "setInterval(() => {}, 1 << 30)", "server", "--port", "4000"];
    const server = await start(process.execPath, args, "/opt/agentapi");
    await writeFile(file, `${server}\n`);
    expect(await findRunningAgentapi(file, 4000)).toEqual({ status: "running", pid: server });
    expect(await findRunningAgentapi(file, 4001)).toEqual({ status: "foreign", pid: server });
  });
});

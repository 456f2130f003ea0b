import { spawn } from "node:child_process";
import { once } from "node:events";
import { lstat, mkdir, symlink, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { pollUntil } from "../../../src/lib/poll.js";
import { isRunning } from "../../../src/lib/processes.js";
import { recordStop } from "../../../src/lifecycle/stop-request.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import {
  claimSupervisorPid,
  findSupervisor,
  isSupervisor,
  RESTART_ARG,
  SUPERVISOR_ARG,
  standDownSupervisor,
  supervisorHelper,
} from "../../../src/supervisor/process.js";
import { exitedPid, liveChildren } from "../children.js";
import { readText, scratchDir } from "../scratch.js";

const MODULE_DIR = "/home/u/.coder-modules/coder/goose";
const at = scratchDir("supervisor-process-test");
const start = liveChildren();
/** A live process whose command line is a supervisor's (node, its code, the two arguments). */
const fakeSupervisor = (dir: string) =>
  start(process.execPath, ["-e", "setInterval(() => {}, 1000)", SUPERVISOR_ARG, dir]);

it.each([
  [["/bin/sh", "-c", "while :; do :; done", SUPERVISOR_ARG, MODULE_DIR], true],
  [["/usr/bin/node", "-e", "the loader", SUPERVISOR_ARG, MODULE_DIR], true],
  [["/bin/sh", "-c", "while :; do :; done", SUPERVISOR_ARG, "/home/other/.coder-modules/coder/goose"], false],
  [["/bin/sh", "-c", "while :; do :; done", SUPERVISOR_ARG], false],
  [["/usr/bin/node", "-e", "the loader", RESTART_ARG, MODULE_DIR, "42"], false],
  [[SUPERVISOR_ARG, MODULE_DIR], false],
  [["/x/agentapi", "server", "--", "goose", SUPERVISOR_ARG], false],
])("isSupervisor %j: this folder's supervisor %s", (argv, ours) => {
  expect(isSupervisor(argv, MODULE_DIR)).toBe(ours);
});

it.each([
  // process.argv under `-e` (the coder_script's loader): the runtime, then the arguments.
  [["/usr/bin/node"], null],
  [["/usr/bin/node", RESTART_ARG, MODULE_DIR, "42"], { mode: "restart", watched: 42 }],
  [["/usr/bin/bun", RESTART_ARG, MODULE_DIR, ""], { mode: "restart", watched: null }],
  [["/usr/bin/node", "goose-module-autosave", MODULE_DIR], { mode: "autosave" }],
])("supervisorHelper %j: %j", (argv, helper) => {
  expect(supervisorHelper(argv)).toEqual(helper);
});

describe("claimSupervisorPid", () => {
  let n = 0;
  /** A fresh module folder, with the PID file's path in it, as a start leaves it. */
  async function folder(): Promise<ModulePaths> {
    const dir = at(`module-${n++}`);
    await mkdir(dir);
    return { dir, supervisorPid: `${dir}/supervisor.pid` } as ModulePaths;
  }

  it("creates the PID file, private, naming this process", async () => {
    const paths = await folder();
    expect(await claimSupervisorPid(paths, 0)).toEqual({ claimed: true });
    expect(await readText(paths.supervisorPid)).toBe(`${process.pid}\n`);
    expect((await lstat(paths.supervisorPid)).mode & 0o777).toBe(0o600);
  });

  it("leaves it to a live supervisor of the same folder, and names it", async () => {
    const paths = await folder();
    const other = await fakeSupervisor(paths.dir);
    await writeFile(paths.supervisorPid, `${other}\n`);
    expect(await claimSupervisorPid(paths, 0)).toEqual({ leave: `supervisor (PID ${other}) already watches AgentAPI` });
    expect(await readText(paths.supervisorPid)).toBe(`${other}\n`);
    expect(await findSupervisor(paths.supervisorPid, paths.dir)).toBe(other);
  });

  it("claims nothing once a stop has run since the start that spawned it", async () => {
    const paths = await folder();
    await recordStop(paths.dir);
    expect(await claimSupervisorPid(paths, 0)).toEqual({ leave: "a stop ran since the start that started it" });
    expect(await readText(paths.supervisorPid).catch(() => null)).toBeNull();
  });

  it.each([
    ["a dead PID", exitedPid],
    ["a live process that is not a supervisor", async () => process.ppid],
    ["the supervisor of another folder", async () => fakeSupervisor("/home/other/.coder-modules/coder/goose")],
  ])("replaces a file naming %s", async (_what, pid) => {
    const paths = await folder();
    const named = await pid();
    await writeFile(paths.supervisorPid, `${named}\n`);
    expect(await findSupervisor(paths.supervisorPid, paths.dir)).toBeNull();
    expect(await claimSupervisorPid(paths, 0)).toEqual({ claimed: true });
    expect(await readText(paths.supervisorPid)).toBe(`${process.pid}\n`);
  });

  it("never writes through a link planted at its name", async () => {
    const paths = await folder();
    const victim = at("victim");
    await writeFile(victim, "keep me\n");
    await symlink(victim, paths.supervisorPid);
    expect(await claimSupervisorPid(paths, 0)).toEqual({ claimed: true });
    expect(await readText(victim)).toBe("keep me\n");
    expect((await lstat(paths.supervisorPid)).isFile()).toBe(true);
  });
});

describe("standDownSupervisor", () => {
  it("a supervisor that does not stand down is killed with every process it started", async () => {
    const dir = at("stand-down");
    await mkdir(dir);
    const paths = { dir, supervisorPid: `${dir}/supervisor.pid` } as ModulePaths;
    // A supervisor's command line, in a session of its own as spawnSupervisor starts it,
    // that ignores SIGTERM and has a helper (which inherits the ignored SIGTERM).
    const sh = spawn("/bin/sh", ["-c", 'trap "" TERM; sleep 60 & echo "$!"; wait', SUPERVISOR_ARG, dir], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = once(sh, "exit");
    const [line] = (await once(createInterface({ input: sh.stdout as Readable }), "line")) as [string];
    const helper = Number(line);
    await writeFile(paths.supervisorPid, `${sh.pid}\n`);
    await standDownSupervisor(paths, 200);
    await exited;
    const helperGone = await pollUntil(async () => ((await isRunning(helper)) ? undefined : true), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    if (!("value" in helperGone)) process.kill(helper, "SIGKILL");
    expect("value" in helperGone, `the helper (PID ${helper}) outlived its supervisor`).toBe(true);
  }, 30_000);
});

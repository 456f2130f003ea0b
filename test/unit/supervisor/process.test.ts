import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { lstat, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { recordStop } from "../../../src/lifecycle/stop-request.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import {
  claimSupervisorPid,
  findSupervisor,
  isSupervisor,
  RESTART_ARG,
  SUPERVISOR_ARG,
  supervisorHelper,
} from "../../../src/supervisor/process.js";

const MODULE_DIR = "/home/u/.coder-modules/coder/goose";

let dir: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "supervisor-process-test-"));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A live process whose command line is a supervisor's (node, its code, the two arguments). */
async function fakeSupervisor(moduleDir: string): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", SUPERVISOR_ARG, moduleDir], {
    stdio: "ignore",
  });
  children.push(child);
  await once(child, "spawn");
  return child.pid as number;
}

async function deadPid(): Promise<number> {
  const child = spawn("true");
  await once(child, "exit");
  return child.pid as number;
}

describe("isSupervisor", () => {
  it.each([
    [["/bin/sh", "-c", "while :; do :; done", SUPERVISOR_ARG, MODULE_DIR], true],
    [["/usr/bin/node", "--input-type=module", "-", SUPERVISOR_ARG, MODULE_DIR], true],
    [["/bin/sh", "-c", "while :; do :; done", SUPERVISOR_ARG, "/home/other/.coder-modules/coder/goose"], false],
    [["/bin/sh", "-c", "while :; do :; done", SUPERVISOR_ARG], false],
    [["/usr/bin/node", "--input-type=module", "-", RESTART_ARG, MODULE_DIR, "42"], false],
    [[SUPERVISOR_ARG, MODULE_DIR], false],
    [["/x/agentapi", "server", "--", "goose", SUPERVISOR_ARG], false],
  ])("%j: this folder's supervisor %s", (argv, ours) => {
    expect(isSupervisor(argv, MODULE_DIR)).toBe(ours);
  });
});

describe("supervisorHelper", () => {
  it.each([
    [["/usr/bin/node", "--input-type=module", "-"], null],
    [["/usr/bin/node", "--input-type=module", "-", RESTART_ARG, MODULE_DIR, "42"], { mode: "restart", watched: 42 }],
    [["/usr/bin/bun", "run", "-", RESTART_ARG, MODULE_DIR, ""], { mode: "restart", watched: null }],
    [["/usr/bin/node", "--input-type=module", "-", "goose-module-autosave", MODULE_DIR], { mode: "autosave" }],
  ])("%j: %j", (argv, helper) => {
    expect(supervisorHelper(argv)).toEqual(helper);
  });
});

describe("claimSupervisorPid", () => {
  /** A fresh module folder, with the PID file's path in it, as a start leaves it. */
  async function folder(): Promise<ModulePaths> {
    const moduleDir = await mkdtemp(path.join(dir, "module-"));
    return { dir: moduleDir, supervisorPid: path.join(moduleDir, "supervisor.pid") } as ModulePaths;
  }

  it("creates the PID file, private, naming this process", async () => {
    const paths = await folder();
    expect(await claimSupervisorPid(paths, 0)).toEqual({ claimed: true });
    expect(await readFile(paths.supervisorPid, "utf8")).toBe(`${process.pid}\n`);
    expect((await lstat(paths.supervisorPid)).mode & 0o777).toBe(0o600);
  });

  it("leaves it to a live supervisor of the same folder, and names it", async () => {
    const paths = await folder();
    const other = await fakeSupervisor(paths.dir);
    await writeFile(paths.supervisorPid, `${other}\n`);
    expect(await claimSupervisorPid(paths, 0)).toEqual({ leave: `supervisor (PID ${other}) already watches AgentAPI` });
    expect(await readFile(paths.supervisorPid, "utf8")).toBe(`${other}\n`);
    expect(await findSupervisor(paths.supervisorPid, paths.dir)).toBe(other);
  });

  it("claims nothing once a stop has run since the start that spawned it", async () => {
    const paths = await folder();
    await recordStop(paths.dir);
    expect(await claimSupervisorPid(paths, 0)).toEqual({ leave: "a stop ran since the start that started it" });
    expect(await readFile(paths.supervisorPid, "utf8").catch(() => null)).toBeNull();
  });

  it.each([
    ["a dead PID", async () => deadPid()],
    ["a live process that is not a supervisor", async () => process.ppid],
    ["the supervisor of another folder", async () => fakeSupervisor("/home/other/.coder-modules/coder/goose")],
  ])("replaces a file naming %s", async (_what, pid) => {
    const paths = await folder();
    const named = await pid();
    await writeFile(paths.supervisorPid, `${named}\n`);
    expect(await findSupervisor(paths.supervisorPid, paths.dir)).toBeNull();
    expect(await claimSupervisorPid(paths, 0)).toEqual({ claimed: true });
    expect(await readFile(paths.supervisorPid, "utf8")).toBe(`${process.pid}\n`);
  });

  it("never writes through a link planted at its name", async () => {
    const paths = await folder();
    const victim = path.join(dir, "victim");
    await writeFile(victim, "keep me\n");
    await symlink(victim, paths.supervisorPid);
    expect(await claimSupervisorPid(paths, 0)).toEqual({ claimed: true });
    expect(await readFile(victim, "utf8")).toBe("keep me\n");
    expect((await lstat(paths.supervisorPid)).isFile()).toBe(true);
  });
});

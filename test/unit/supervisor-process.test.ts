import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { lstat, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  claimSupervisorPid,
  findSupervisor,
  isSupervisor,
  SUPERVISOR_ARG,
  supervisedFolder,
} from "../../src/supervisor-process.js";

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

describe("isSupervisor and supervisedFolder", () => {
  it.each([
    [["/usr/bin/node", "--input-type=module", "-", SUPERVISOR_ARG, MODULE_DIR], true, MODULE_DIR],
    [["/usr/bin/bun", "run", "-", SUPERVISOR_ARG, MODULE_DIR], true, MODULE_DIR],
    [
      ["/usr/bin/node", "--input-type=module", "-", SUPERVISOR_ARG, "/home/other/.coder-modules/coder/goose"],
      false,
      "/home/other/.coder-modules/coder/goose",
    ],
    [["/usr/bin/node", "--input-type=module", "-", SUPERVISOR_ARG], false, null],
    [["/usr/bin/node", "--input-type=module", "-"], false, null],
    [[SUPERVISOR_ARG, MODULE_DIR], false, null],
    [["/x/agentapi", "server", "--", "goose", SUPERVISOR_ARG], false, null],
  ])("%j: this folder's supervisor %s, supervises %s", (argv, ours, folder) => {
    expect(isSupervisor(argv, MODULE_DIR)).toBe(ours);
    expect(supervisedFolder(argv)).toBe(folder);
  });
});

describe("claimSupervisorPid", () => {
  const pidFile = () => path.join(dir, `supervisor-${Math.random().toString(36).slice(2)}.pid`);

  it("creates the PID file, private, naming this process", async () => {
    const file = pidFile();
    expect(await claimSupervisorPid(file, MODULE_DIR)).toBeNull();
    expect(await readFile(file, "utf8")).toBe(`${process.pid}\n`);
    expect((await lstat(file)).mode & 0o777).toBe(0o600);
  });

  it("leaves it to a live supervisor of the same folder, and names it", async () => {
    const file = pidFile();
    const other = await fakeSupervisor(MODULE_DIR);
    await writeFile(file, `${other}\n`);
    expect(await claimSupervisorPid(file, MODULE_DIR)).toBe(other);
    expect(await readFile(file, "utf8")).toBe(`${other}\n`);
    expect(await findSupervisor(file, MODULE_DIR)).toBe(other);
  });

  it.each([
    ["a dead PID", async () => deadPid()],
    ["a live process that is not a supervisor", async () => process.ppid],
    ["the supervisor of another folder", async () => fakeSupervisor("/home/other/.coder-modules/coder/goose")],
  ])("replaces a file naming %s", async (_what, pid) => {
    const file = pidFile();
    const named = await pid();
    await writeFile(file, `${named}\n`);
    expect(await findSupervisor(file, MODULE_DIR)).toBeNull();
    expect(await claimSupervisorPid(file, MODULE_DIR)).toBeNull();
    expect(await readFile(file, "utf8")).toBe(`${process.pid}\n`);
  });

  it("never writes through a link planted at its name", async () => {
    const file = pidFile();
    const victim = path.join(dir, "victim");
    await writeFile(victim, "keep me\n");
    await symlink(victim, file);
    expect(await claimSupervisorPid(file, MODULE_DIR)).toBeNull();
    expect(await readFile(victim, "utf8")).toBe("keep me\n");
    expect((await lstat(file)).isFile()).toBe(true);
  });
});

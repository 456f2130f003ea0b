// AgentAPI's and the supervisor's logs are rotated when they are opened at a
// start, a restart or a supervisor's launch, so they cannot fill the home
// volume that also holds Goose's sessions and the chat.

import { once } from "node:events";
import { mkdir, readdir, symlink, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnAgentapi } from "../../../src/launch/agentapi-process.js";
import { LOG_LIMITS, openRotatedLog } from "../../../src/lib/command-log.js";
import { signal } from "../../../src/lib/processes.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { spawnSupervisor, supervisorLog } from "../../../src/supervisor/process.js";
import { readText, scratchFolders } from "../scratch.js";

const fresh = scratchFolders("log-rotation-test");

async function append(file: string, text: string, limits = { maxBytes: 10, generations: 2 }): Promise<void> {
  const handle = await openRotatedLog(file, limits);
  await handle.write(text);
  await handle.close();
}

async function logFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) out[name] = await readText(path.join(dir, name));
  return out;
}

/** A log already at the real cap: the next open must rotate it. */
async function fullLog(file: string): Promise<void> {
  await writeFile(file, "old run\n");
  await truncate(file, LOG_LIMITS.maxBytes);
}

describe("openRotatedLog", () => {
  it("appends below the cap, rotates at it, and keeps only the newest generations", async () => {
    const dir = await fresh();
    const file = path.join(dir, "a.log");
    await append(file, "0123456\n"); // 8 bytes: below the cap of 10
    await append(file, "second\n"); // appended: 15 bytes
    expect(await logFiles(dir)).toEqual({ "a.log": "0123456\nsecond\n" });
    await append(file, "third run\n"); // 15 >= 10: rotated first
    await append(file, "fourth run\n");
    await append(file, "fifth\n");
    expect(await logFiles(dir)).toEqual({ "a.log": "fifth\n", "a.log.1": "fourth run\n", "a.log.2": "third run\n" });
  });

  it("moves a link planted at a generation's name, never what it points to", async () => {
    const dir = await fresh();
    const file = path.join(dir, "a.log");
    const victim = path.join(dir, "victim");
    await writeFile(victim, "precious");
    await writeFile(file, "x".repeat(20));
    await symlink(victim, `${file}.1`);
    await append(file, "new\n");
    expect(await readText(victim)).toBe("precious");
    expect(await readText(file)).toBe("new\n");
  });
});

describe("the logs that live as long as the workspace", () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) signal(pid, "SIGKILL");
  });

  it("logs/agentapi.log is rotated when AgentAPI is launched", async () => {
    const logs = await fresh();
    const logFile = path.join(logs, "agentapi.log");
    await fullLog(logFile);
    const child = await spawnAgentapi({ binary: "/bin/true", args: [], env: {}, cwd: logs, logFile });
    if (child.exitCode === null) await once(child, "exit");
    expect((await readText(`${logFile}.1`)).startsWith("old run\n")).toBe(true);
    expect(await readText(logFile)).toMatch(/^\n--- \S+ \/bin\/true \n$/);
  });

  it("logs/supervisor.log is rotated when the supervisor is launched", async () => {
    const dir = await fresh();
    const at = (name: string) => path.join(dir, name);
    const paths = { dir, logs: at("logs"), supervisorPid: at("supervisor.pid") } as ModulePaths;
    await mkdir(paths.logs);
    await fullLog(supervisorLog(paths));
    // Stands in for supervisor.sh: stays.
    const pid = await spawnSupervisor({ paths, source: "exec sleep 60", env: process.env });
    started.push(pid);
    expect((await readText(`${supervisorLog(paths)}.1`)).startsWith("old run\n")).toBe(true);
    expect((await readText(supervisorLog(paths))).length).toBeLessThan(LOG_LIMITS.maxBytes);
  });
});

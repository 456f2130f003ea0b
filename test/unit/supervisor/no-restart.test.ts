// The sh supervisor's give-up when the runtime its helpers would run changed
// since the start verified it (src/supervisor/supervisor.sh, runtime_unchanged
// and record_give_up), against a real /bin/sh: no helper can write the reason
// into the launch record then, so the sh adds it itself.
import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pollUntil } from "../../../src/lib/poll.js";
import { signal } from "../../../src/lib/processes.js";
import { type LaunchRecord, writeLaunchRecord } from "../../../src/lifecycle/launch-record.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { spawnSupervisor, supervisorLog } from "../../../src/supervisor/process.js";
import { readText, scratchFolders } from "../scratch.js";

// Past the supervisor's own waits below (30 s each): a loaded machine can stretch a process start.
const BOUND_MS = 60_000;
const SUPERVISOR_SH = path.join(import.meta.dirname, "../../../src/supervisor/supervisor.sh");
const fresh = scratchFolders("runtime-give-up-test");

const RECORD: LaunchRecord = {
  persistence: true,
  persistence_reason: "AgentAPI v0.12.2 supports --state-file",
  agentapi_binary: "/home/u/.coder-modules/coder/goose/bin/agentapi",
  agentapi_version: "0.12.2",
  port: 3284,
  state_file: "/home/u/.coder-modules/coder/goose/agentapi-state.json",
  state_backup: null,
  pid_file: "/home/u/.coder-modules/coder/goose/agentapi.pid",
  session_name: "coder-goose",
  mode: "warm",
  interrupted_turn: { action: "none", reason: "no turn was left unanswered" },
  started_at: "2026-01-01T00:00:00.000Z",
  goose: {
    db: "/home/u/.local/share/goose/sessions/sessions.db",
    binary: "/home/u/.local/bin/goose",
    binary_identity: { kind: "missing" },
    folder: "/home/u/project",
    session_id: "20260101_1",
    messages: 2,
    working_dir: "/home/u/project",
    conversation_end: "answered",
  },
};

/**
 * A module folder whose runtime, at a path no shell may read as source,
 * differs from the digest the start gave the supervisor (or is what `install`
 * writes there, with the digest it returns); its supervisor is started with
 * no AgentAPI to watch, so it goes straight to a restart.
 */
async function changedRuntime(
  install?: (runtime: string) => Promise<string>,
): Promise<{ paths: ModulePaths; runtime: string; pid: number; verified: string }> {
  const dir = await fresh();
  const paths = {
    dir,
    logs: path.join(dir, "logs"),
    supervisorPid: path.join(dir, "supervisor.pid"),
    launchRecord: path.join(dir, "agentapi-launch.json"),
    pidFile: path.join(dir, "agentapi.pid"),
  } as ModulePaths;
  await mkdir(paths.logs);
  const folder = path.join(dir, `node "q" \\ $(touch pwned) \`touch pwned\` 'x'\n\tend`);
  await mkdir(folder);
  const runtime = path.join(folder, "node");
  let verified: string;
  if (install) {
    verified = await install(runtime);
  } else {
    await writeFile(runtime, "changed since the start");
    verified = createHash("sha256").update("as the start verified it").digest("hex");
  }
  const pid = await spawnSupervisor({
    paths,
    source: await readFile(SUPERVISOR_SH, "utf8"),
    env: {
      PATH: process.env.PATH,
      GOOSE_MODULE_RUNTIME: runtime,
      GOOSE_MODULE_RUNTIME_KIND: "node",
      GOOSE_MODULE_RUNTIME_SHA256: verified,
      GOOSE_MODULE_AGENTAPI_PID_FILE: paths.pidFile,
      GOOSE_MODULE_SESSIONS_DB: "",
      GOOSE_MODULE_SUPERVISOR_PID: paths.supervisorPid,
      GOOSE_MODULE_LAUNCH_RECORD: paths.launchRecord,
    },
  });
  started.push(pid);
  return { paths, runtime, pid, verified };
}

/** Claims the PID file for the supervisor as the start does, then waits for its last word. */
async function gaveUp(paths: ModulePaths, pid: number): Promise<string> {
  await writeFile(paths.supervisorPid, `${pid}\n`);
  const said = await pollUntil(
    async () => {
      const text = await readText(supervisorLog(paths)).catch(() => "");
      // It removes its PID file as it leaves, after the log line.
      const left = await lstat(paths.supervisorPid).then(
        () => false,
        () => true,
      );
      return left && /gave up: /.test(text) ? text : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  if (!("value" in said)) throw new Error("the supervisor did not give up within 30 s");
  return said.value;
}

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) signal(pid, "SIGKILL");
});

describe("a runtime changed since the start", () => {
  it(
    "the supervisor adds the reason to the launch record, a JSON string whatever the runtime's path holds",
    async () => {
      const { paths, runtime, pid, verified } = await changedRuntime();
      await writeLaunchRecord(paths.launchRecord, RECORD);
      const log = await gaveUp(paths, pid);

      const record = JSON.parse(await readText(paths.launchRecord));
      expect(record).toEqual({ ...RECORD, supervisor: { gave_up_at: expect.any(String), reason: expect.any(String) } });
      expect(Number.isNaN(Date.parse(record.supervisor.gave_up_at))).toBe(false);
      // The path as written, its newline and tab each shown as "?".
      const shown = runtime.replace("\n", "?").replace("\t", "?");
      expect(record.supervisor.reason.startsWith(`Check ${shown}, then restart the workspace: `)).toBe(true);
      expect(record.supervisor.reason).toContain("changed since the start verified it");
      expect(record.supervisor.reason).toContain(`was ${verified}`);
      // The log's line says the same, with the path as it is.
      expect(log).toContain(`gave up: Check ${runtime}, then restart the workspace:`);
      expect((await stat(paths.launchRecord)).mode & 0o777).toBe(0o600);
      expect((await readdir(paths.dir)).sort()).toEqual(
        ["agentapi-launch.json", "logs", path.basename(path.dirname(runtime))].sort(),
      );
    },
    BOUND_MS,
  );

  it(
    "a runtime at such a path that did not change runs",
    async () => {
      const { paths, runtime, pid } = await changedRuntime(async (runtime) => {
        // Stands in for the runtime: says it ran, then asks the loop to stand down (exit code 20).
        await writeFile(runtime, `#!/bin/sh\n: > "$(dirname "$0")/ran"\nexit 20\n`, { mode: 0o700 });
        return createHash("sha256")
          .update(await readFile(runtime))
          .digest("hex");
      });
      await writeLaunchRecord(paths.launchRecord, RECORD);
      await writeFile(paths.supervisorPid, `${pid}\n`);
      const ran = path.join(path.dirname(runtime), "ran");
      const done = await pollUntil(
        async () => ((await lstat(paths.supervisorPid).catch(() => null)) === null ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 20 },
      );
      expect("value" in done).toBe(true);
      expect(await readText(supervisorLog(paths))).not.toMatch(/gave up/);
      expect((await lstat(ran)).isFile()).toBe(true);
      expect(JSON.parse(await readText(paths.launchRecord))).toEqual(RECORD);
    },
    BOUND_MS,
  );

  it(
    "writes nothing through a link planted at the launch record's name",
    async () => {
      const { paths, pid } = await changedRuntime();
      const victim = path.join(paths.dir, "victim.json");
      await writeFile(victim, `${JSON.stringify({ precious: true })}\n`);
      await symlink(victim, paths.launchRecord);
      const log = await gaveUp(paths, pid);

      expect(log).toMatch(/gave up: Check /);
      expect(await readText(victim)).toBe(`${JSON.stringify({ precious: true })}\n`);
      expect(await readlink(paths.launchRecord)).toBe(victim);
    },
    BOUND_MS,
  );
});

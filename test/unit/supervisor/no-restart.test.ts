// The sh supervisor's give-up when the start said nothing may be relaunched
// (src/supervisor/supervisor.sh, restart and record_give_up, with the reason
// from supervisorRefusals), against a real /bin/sh: no helper runs then, so
// the sh adds the reason to the launch record itself.
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
const fresh = scratchFolders("no-restart-test");

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

// A reason holding what a JSON string must escape: a path may hold anything.
const REFUSAL = `Restart the workspace to bring Goose back, and make /home/u/"q" \\ $(touch pwned) \`x\`\n\tend root's`;

/**
 * A module folder with a stand-in runtime, at a path no shell may read as
 * source, that says it ran and asks the loop to stand down (exit code 20);
 * its supervisor is started with no AgentAPI to watch, so it goes straight
 * to a restart, with `refusal` as the start's reason to relaunch nothing.
 */
async function supervisorWith(refusal: string): Promise<{ paths: ModulePaths; ran: string; pid: number }> {
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
  await writeFile(runtime, `#!/bin/sh\n: > "$(dirname "$0")/ran"\nexit 20\n`, { mode: 0o700 });
  const pid = await spawnSupervisor({
    paths,
    source: await readFile(SUPERVISOR_SH, "utf8"),
    env: {
      PATH: process.env.PATH,
      GOOSE_MODULE_RUNTIME: runtime,
      GOOSE_MODULE_RUNTIME_KIND: "node",
      GOOSE_MODULE_NO_RESTART: refusal,
      GOOSE_MODULE_AGENTAPI_PID_FILE: paths.pidFile,
      GOOSE_MODULE_SESSIONS_DB: "",
      GOOSE_MODULE_SUPERVISOR_PID: paths.supervisorPid,
      GOOSE_MODULE_LAUNCH_RECORD: paths.launchRecord,
    },
  });
  started.push(pid);
  return { paths, ran: path.join(folder, "ran"), pid };
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

describe("nothing may be relaunched", () => {
  it(
    "the supervisor runs nothing and adds the reason to the launch record, a JSON string whatever it holds",
    async () => {
      const { paths, ran, pid } = await supervisorWith(REFUSAL);
      await writeLaunchRecord(paths.launchRecord, RECORD);
      const log = await gaveUp(paths, pid);

      const record = JSON.parse(await readText(paths.launchRecord));
      expect(record).toEqual({ ...RECORD, supervisor: { gave_up_at: expect.any(String), reason: expect.any(String) } });
      expect(Number.isNaN(Date.parse(record.supervisor.gave_up_at))).toBe(false);
      // As written, its newline and tab each shown as "?".
      expect(record.supervisor.reason).toBe(REFUSAL.replace("\n", "?").replace("\t", "?"));
      // The log's line says the same, as it is.
      expect(log).toContain(`gave up: ${REFUSAL}`);
      expect((await stat(paths.launchRecord)).mode & 0o777).toBe(0o600);
      expect(await lstat(ran).catch(() => null)).toBeNull();
      expect((await readdir(paths.dir)).sort()).toEqual(
        ["agentapi-launch.json", "logs", path.basename(path.dirname(ran))].sort(),
      );
    },
    BOUND_MS,
  );

  it(
    "without a reason, the restart runs the runtime",
    async () => {
      const { paths, ran, pid } = await supervisorWith("");
      await writeLaunchRecord(paths.launchRecord, RECORD);
      await writeFile(paths.supervisorPid, `${pid}\n`);
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
      const { paths, pid } = await supervisorWith(REFUSAL);
      const victim = path.join(paths.dir, "victim.json");
      await writeFile(victim, `${JSON.stringify({ precious: true })}\n`);
      await symlink(victim, paths.launchRecord);
      const log = await gaveUp(paths, pid);

      expect(log).toContain(`gave up: ${REFUSAL}`);
      expect(await readText(victim)).toBe(`${JSON.stringify({ precious: true })}\n`);
      expect(await readlink(paths.launchRecord)).toBe(victim);
    },
    BOUND_MS,
  );
});

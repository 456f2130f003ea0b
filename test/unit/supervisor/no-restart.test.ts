// The sh supervisor's give-up (src/supervisor/supervisor.sh, restart and
// record_give_up), against a real /bin/sh: when the start said nothing may be
// relaunched, no helper runs and the sh writes the reason; when the restart
// helper gives up, it hands the sh its reason on descriptor 3.
import { lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pollUntil } from "../../../src/lib/poll.js";
import { signal } from "../../../src/lib/processes.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { gaveUpFile, lastGiveUp, spawnSupervisor, supervisorLog } from "../../../src/supervisor/process.js";
import { readText, scratchFolders } from "../scratch.js";

// Past the supervisor's own waits below (30 s each): a loaded machine can stretch a process start.
const BOUND_MS = 60_000;
const SUPERVISOR_SH = path.join(import.meta.dirname, "../../../src/supervisor/supervisor.sh");
const fresh = scratchFolders("no-restart-test");

// A reason holding what sh or JSON would read as code: a path may hold anything.
const REFUSAL = `Restart the workspace to bring Goose back, and make /home/u/"q" \\ $(touch pwned) \`x\`\n\tend root's`;

/**
 * A module folder with a stand-in runtime, at a path no shell may read as
 * source, that says it ran, with its umask, then runs `then` (by default it
 * asks the loop to stand down, exit code 20); its supervisor is started with
 * no AgentAPI to watch, so it goes straight to a restart, with `refusal` as
 * the start's reason to relaunch nothing.
 */
async function supervisorWith(
  refusal: string,
  then = "exit 20",
): Promise<{ paths: ModulePaths; ran: string; pid: number }> {
  const dir = await fresh();
  const paths = {
    dir,
    logs: path.join(dir, "logs"),
    supervisorPid: path.join(dir, "supervisor.pid"),
    pidFile: path.join(dir, "agentapi.pid"),
  } as ModulePaths;
  await mkdir(paths.logs);
  const folder = path.join(dir, `node "q" \\ $(touch pwned) \`touch pwned\` 'x'\n\tend`);
  await mkdir(folder);
  const runtime = path.join(folder, "node");
  await writeFile(runtime, `#!/bin/sh\numask > "$(dirname "$0")/ran"\n${then}\n`, { mode: 0o700 });
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
      GOOSE_MODULE_GAVE_UP: gaveUpFile(paths),
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

/** The give-up file's time and reason. */
async function recorded(paths: ModulePaths): Promise<{ time: string; reason: string }> {
  const text = await readText(gaveUpFile(paths));
  const [time = "", ...rest] = text.split("\n");
  return { time, reason: rest.join("\n").replace(/\n$/, "") };
}

describe("the supervisor's give-up, written by the sh alone", () => {
  it(
    "nothing may be relaunched: the supervisor runs nothing and writes the time and the reason, as it is, 0600",
    async () => {
      const { paths, ran, pid } = await supervisorWith(REFUSAL);
      const log = await gaveUp(paths, pid);

      const { time, reason } = await recorded(paths);
      expect(Number.isNaN(Date.parse(time))).toBe(false);
      expect(reason).toBe(REFUSAL);
      expect(log).toContain(`gave up: ${REFUSAL}`);
      expect((await stat(gaveUpFile(paths))).mode & 0o777).toBe(0o600);
      // The next start reads it on one line (no launch record: nothing to hold its time against).
      expect(await lastGiveUp(paths)).toBe(REFUSAL.replace("\n\t", "  "));
      expect(await lstat(ran).catch(() => null)).toBeNull();
      expect((await readdir(paths.dir)).sort()).toEqual(
        ["logs", "supervisor.gave-up", path.basename(path.dirname(ran))].sort(),
      );
    },
    BOUND_MS,
  );

  it(
    "the restart helper gives up: its reason, handed over on descriptor 3, is what the sh writes; the helper had the user's umask",
    async () => {
      const { paths, ran, pid } = await supervisorWith("", `printf '%s' '5 restarts failed' >&3\nexit 30`);
      const log = await gaveUp(paths, pid);

      expect((await recorded(paths)).reason).toBe("5 restarts failed");
      expect(log).toContain("gave up: 5 restarts failed");
      expect((await readText(ran)).trim()).toBe(process.umask().toString(8).padStart(4, "0"));
      expect((await readdir(paths.dir)).sort()).toEqual(
        ["logs", "supervisor.gave-up", path.basename(path.dirname(ran))].sort(),
      );
    },
    BOUND_MS,
  );

  it(
    "without a reason, the restart runs the runtime, and nothing is written",
    async () => {
      const { paths, ran, pid } = await supervisorWith("");
      await writeFile(paths.supervisorPid, `${pid}\n`);
      const done = await pollUntil(
        async () => ((await lstat(paths.supervisorPid).catch(() => null)) === null ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 20 },
      );
      expect("value" in done).toBe(true);
      expect(await readText(supervisorLog(paths))).not.toMatch(/gave up/);
      expect((await lstat(ran)).isFile()).toBe(true);
      expect(await lstat(gaveUpFile(paths)).catch(() => null)).toBeNull();
    },
    BOUND_MS,
  );

  it(
    "writes nothing through a link planted at the give-up's name: the link itself is replaced",
    async () => {
      const { paths, pid } = await supervisorWith(REFUSAL);
      const victim = path.join(paths.dir, "victim.json");
      await writeFile(victim, `${JSON.stringify({ precious: true })}\n`);
      await symlink(victim, gaveUpFile(paths));
      const log = await gaveUp(paths, pid);

      expect(log).toContain(`gave up: ${REFUSAL}`);
      expect(await readText(victim)).toBe(`${JSON.stringify({ precious: true })}\n`);
      expect((await lstat(gaveUpFile(paths))).isFile()).toBe(true);
      expect((await recorded(paths)).reason).toBe(REFUSAL);
    },
    BOUND_MS,
  );
});

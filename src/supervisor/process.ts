import { closeSync, constants, openSync, readFileSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import path from "node:path";
import { startDetached } from "../lib/detached.js";
import { log, warn } from "../lib/log.js";
import { pollUntil } from "../lib/poll.js";
import { isRunning, readCmdline, readPidFile, removePidFile, signal } from "../lib/processes.js";
import { readLaunchRecord } from "../lifecycle/launch-record.js";
import { acquireLifecycleLock, lockPatience } from "../lifecycle/lock.js";
import { stoppedSince } from "../lifecycle/stop-request.js";
import type { ModulePaths } from "../settings/config.js";

// The supervisor is a sh loop (supervisor.sh) whose $0 and $1 are these two
// values, so its command line says what it is and whose (the stop signals
// nothing else). It starts the start script's own code with one of the other
// two, and the module folder, after the code's `-` to run a restart or an
// autosave.
export const SUPERVISOR_ARG = "goose-module-supervisor";
export const RESTART_ARG = "goose-module-restart";
export const AUTOSAVE_ARG = "goose-module-autosave";

export function supervisorLog(paths: ModulePaths): string {
  return path.join(paths.logs, "supervisor.log");
}

/** Why the supervisor gave up, written by supervisor.sh alone (record_give_up). */
export function gaveUpFile(paths: ModulePaths): string {
  return path.join(paths.dir, "supervisor.gave-up");
}

/**
 * The reason in a give-up file (its time on the first line, the reason
 * after), on one line; null when the give-up is older than the last launch
 * (`launchedAt`, the launch record's start time; the file's is to the second).
 */
export function giveUpOf(text: string, launchedAt: string | null): string | null {
  const [time = "", ...rest] = text.split("\n");
  const reason = rest
    .join(" ")
    .replace(/\p{Cc}/gu, " ")
    .trim();
  const at = Date.parse(time);
  const launched = Math.floor(Date.parse(launchedAt ?? "") / 1000) * 1000;
  return reason === "" || Number.isNaN(at) || at < launched ? null : reason;
}

/**
 * Why the last run's supervisor gave up, if it did: read by the next start,
 * so the user learns it where they look, in the start's log.
 */
export async function lastGiveUp(paths: ModulePaths): Promise<string | null> {
  let fd: number | undefined;
  try {
    fd = openSync(gaveUpFile(paths), constants.O_RDONLY | constants.O_NOFOLLOW);
    const text = readFileSync(fd, "utf8");
    const read = await readLaunchRecord(paths.launchRecord);
    return giveUpOf(text, "record" in read ? read.record.started_at : null);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** True when a command line is the supervisor of this module folder. */
export function isSupervisor(argv: string[], moduleDir: string): boolean {
  const at = argv.indexOf(SUPERVISOR_ARG);
  return at > 0 && argv[at + 1] === moduleDir;
}

/** What the supervisor started this process for, when it did: a restart (after the exit of `watched`) or an autosave. */
export function supervisorHelper(
  argv: string[] = process.argv,
): { mode: "restart"; watched: number | null } | { mode: "autosave" } | null {
  if (argv.includes(AUTOSAVE_ARG)) return { mode: "autosave" };
  const at = argv.indexOf(RESTART_ARG);
  if (at < 0) return null;
  const watched = Number(argv[at + 2]);
  return { mode: "restart", watched: Number.isInteger(watched) && watched > 0 ? watched : null };
}

/** The PID of this folder's running supervisor, never a recycled PID; null when none runs. */
export async function findSupervisor(pidFile: string, moduleDir: string): Promise<number | null> {
  const pid = await readPidFile(pidFile);
  if (pid === null) return null;
  const argv = await readCmdline(pid);
  return argv !== null && isSupervisor(argv, moduleDir) ? pid : null;
}

/**
 * Makes `pid` the folder's one supervisor: creates the PID file, never
 * through a planted link, under the lifecycle lock, so two supervisors that
 * meet a stale file (normal after a container restart: $HOME persists) cannot
 * both replace it, and a stop cannot stand down the file's supervisor while
 * another takes its place. Says why not when this one must leave: another
 * supervisor already runs, a stop ran since the start that spawned this one,
 * or the lock stayed busy.
 */
export async function claimSupervisorPid(
  paths: ModulePaths,
  stopsSeen: number,
  pid = process.pid,
): Promise<{ claimed: true } | { leave: string }> {
  const locked = await acquireLifecycleLock(paths.dir, `supervisor`, { patienceMs: lockPatience });
  if ("noFolder" in locked) return { leave: `${paths.dir} is gone` };
  if ("busy" in locked)
    return {
      leave: `the module folder's lifecycle lock stayed busy for ${locked.waitedMs} ms (held by ${locked.busy}); nothing was claimed`,
    };
  if ("aborted" in locked) return { leave: locked.aborted };
  try {
    if (await stoppedSince(paths.dir, stopsSeen)) return { leave: "a stop ran since the start that started it" };
    const other = await findSupervisor(paths.supervisorPid, paths.dir);
    if (other !== null && other !== pid) return { leave: `supervisor (PID ${other}) already watches AgentAPI` };
    // Stale (its supervisor is gone): under the lock nobody else can replace it meanwhile.
    await rm(paths.supervisorPid, { force: true });
    const handle = await open(
      paths.supervisorPid,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.writeFile(`${pid}\n`);
    } finally {
      await handle.close();
    }
    return { claimed: true };
  } finally {
    await locked.lock.release();
  }
}

/**
 * The stop's first step after it has counted itself, under the lifecycle
 * lock: tells the supervisor to stand down and waits until it has, so nothing
 * it does can race the stop. It stands down at once on SIGTERM, within a few
 * ms; during a restart it first ends the AgentAPI it was starting. It waits
 * for its own children (the autosave helper included), removes its PID file
 * and exits: only its exit counts as done, since a stop that went on at the
 * PID file's removal could end, on a busy machine, with the sh loop still
 * there. It is a POSIX sh, so its exit costs no runtime's teardown. Polls
 * every 2 ms: each one counts in an idle stop.
 */
export async function standDownSupervisor(paths: ModulePaths, boundMs: number): Promise<void> {
  const pid = await findSupervisor(paths.supervisorPid, paths.dir);
  if (pid === null) return;
  signal(pid, "SIGTERM");
  const done = async () => ((await isRunning(pid)) ? undefined : true);
  const gone = await pollUntil(done, { timeoutMs: boundMs, intervalMs: 2 });
  if ("value" in gone) return log(`supervisor (PID ${pid}) stood down`);
  // Its whole process group: the supervisor leads its own session (spawnSupervisor),
  // so its helpers and their pipelines go with it instead of outliving the stop,
  // while AgentAPI, started in a session of its own, is left to the stop.
  if (!signal(-pid, "SIGKILL")) signal(pid, "SIGKILL");
  await removePidFile(paths.supervisorPid, pid);
  warn(
    `the supervisor (PID ${pid}) did not stand down within ${boundMs} ms of SIGTERM; sent SIGKILL to it and its helpers`,
  );
}

/**
 * Starts the supervisor: /bin/sh, with supervisor.sh as its source and its
 * inputs in `env`. It gets its own session, and its output goes to
 * logs/supervisor.log, never to this script's stdout and stderr: the Coder
 * agent waits up to 10 s for those pipes to close after the script exits,
 * then reports the script as failed ("output pipes were not closed";
 * cmd.WaitDelay and ErrOutputPipesOpen in agent/agentscripts/agentscripts.go,
 * coder/coder). It waits for the caller to claim the PID file for it.
 */
export async function spawnSupervisor(opts: {
  paths: ModulePaths;
  source: string;
  env: NodeJS.ProcessEnv;
}): Promise<number> {
  const child = await startDetached("/bin/sh", ["-c", opts.source, SUPERVISOR_ARG, opts.paths.dir], {
    cwd: "/",
    env: opts.env,
    logFile: supervisorLog(opts.paths),
  });
  child.unref();
  return child.pid as number;
}

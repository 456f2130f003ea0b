import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { open, rm } from "node:fs/promises";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { logTail, openRotatedLog } from "../lib/command-log.js";
import { log, warn } from "../lib/log.js";
import { pollUntil } from "../lib/poll.js";
import { isRunning, readCmdline, readPidFile, removePidFile, signal } from "../lib/processes.js";
import { acquireLifecycleLock, lockPatience } from "../lifecycle/lock.js";
import { stoppedSince } from "../lifecycle/stop-request.js";
import type { ModulePaths } from "../settings/config.js";

// The supervisor runs the start script's own code again; these two arguments
// after the code's `-` put it in supervise mode and name the module folder it
// watches, so its command line says what it is (the stop signals nothing else).
export const SUPERVISOR_ARG = "goose-module-supervisor";

export function supervisorLog(paths: ModulePaths): string {
  return path.join(paths.logs, "supervisor.log");
}

/** True when a command line is the supervisor of this module folder. */
export function isSupervisor(argv: string[], moduleDir: string): boolean {
  const at = argv.indexOf(SUPERVISOR_ARG);
  return at > 0 && argv[at + 1] === moduleDir;
}

/** The module folder this process supervises, when it was started as a supervisor. */
export function supervisedFolder(argv: string[] = process.argv): string | null {
  const at = argv.indexOf(SUPERVISOR_ARG);
  return at > 0 ? (argv[at + 1] ?? null) : null;
}

/** The PID of this folder's running supervisor, never a recycled PID; null when none runs. */
export async function findSupervisor(pidFile: string, moduleDir: string): Promise<number | null> {
  const pid = await readPidFile(pidFile);
  if (pid === null) return null;
  const argv = await readCmdline(pid);
  return argv !== null && isSupervisor(argv, moduleDir) ? pid : null;
}

/**
 * Makes this process the folder's one supervisor: creates the PID file, never
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
): Promise<{ claimed: true } | { leave: string }> {
  const locked = await acquireLifecycleLock(paths.dir, `supervisor`, { patienceMs: lockPatience });
  if ("noFolder" in locked) return { leave: `${paths.dir} is gone` };
  if ("busy" in locked)
    return { leave: `the module folder's lifecycle lock stayed busy (held by ${locked.busy}); nothing was claimed` };
  if ("aborted" in locked) return { leave: locked.aborted };
  try {
    if (await stoppedSince(paths.dir, stopsSeen)) return { leave: "a stop ran since the start that started it" };
    const other = await findSupervisor(paths.supervisorPid, paths.dir);
    if (other !== null && other !== process.pid) return { leave: `supervisor (PID ${other}) already watches AgentAPI` };
    // Stale (its supervisor is gone): under the lock nobody else can replace it meanwhile.
    await rm(paths.supervisorPid, { force: true });
    const handle = await open(
      paths.supervisorPid,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.writeFile(`${process.pid}\n`);
    } finally {
      await handle.close();
    }
    return { claimed: true };
  } finally {
    await locked.lock.release();
  }
}

export function releaseSupervisorPid(pidFile: string): Promise<void> {
  return removePidFile(pidFile, process.pid);
}

/**
 * The stop's first step after it has counted itself, under the lifecycle
 * lock: tells the supervisor to stand down and waits until it has, so nothing
 * it does can race the stop. It stands down at once on SIGTERM, within a few
 * ms; during a restart it first ends the AgentAPI it was starting. Its last
 * act before it exits is to remove its PID file, so that counts as done;
 * waiting for the exit itself would add the runtime's teardown to every stop.
 * Polls every 2 ms: each one counts in an idle stop.
 */
export async function standDownSupervisor(paths: ModulePaths, boundMs: number): Promise<void> {
  const pid = await findSupervisor(paths.supervisorPid, paths.dir);
  if (pid === null) return;
  signal(pid, "SIGTERM");
  const done = async () =>
    (await readPidFile(paths.supervisorPid)) !== pid || !(await isRunning(pid)) ? true : undefined;
  const gone = await pollUntil(done, { timeoutMs: boundMs, intervalMs: 2 });
  if ("value" in gone) return log(`supervisor (PID ${pid}) stood down`);
  signal(pid, "SIGKILL");
  await removePidFile(paths.supervisorPid, pid);
  warn(`the supervisor (PID ${pid}) did not stand down within ${boundMs} ms of SIGTERM; sent SIGKILL`);
}

// Node.js reads the code from stdin and starts it within a second; the bound
// covers a slow machine.
const CLAIM_TIMEOUT_MS = 15_000;

/**
 * Starts the supervisor: this runtime again, the script's code on stdin, its
 * document (gzip+base64 JSON) in CODER_MODULE_SETTINGS, which it reads and
 * removes, so neither is ever written to disk. It gets its own session, and
 * its output goes to logs/supervisor.log, never to this script's stdout and
 * stderr: the Coder agent waits up to 10 s for those pipes to close after the
 * script exits, then reports the script as failed ("output pipes were not
 * closed"; cmd.WaitDelay and ErrOutputPipesOpen in agent/agentscripts/
 * agentscripts.go, coder/coder). Returns its PID once it holds the PID file.
 */
export async function spawnSupervisor(opts: {
  paths: ModulePaths;
  code: Buffer;
  document: unknown;
  env: NodeJS.ProcessEnv;
}): Promise<number> {
  const { paths } = opts;
  const logFile = supervisorLog(paths);
  const out = await openRotatedLog(logFile);
  const runtimeArgs = process.versions.bun ? ["run", "-"] : ["--input-type=module", "-"];
  const settings = gzipSync(JSON.stringify(opts.document)).toString("base64");
  let exited: string | undefined;
  try {
    const child = spawn(process.execPath, [...runtimeArgs, SUPERVISOR_ARG, paths.dir], {
      cwd: "/",
      env: { ...opts.env, CODER_MODULE_SETTINGS: settings },
      detached: true,
      stdio: ["pipe", out.fd, out.fd],
    });
    child.once("exit", (code, sig) => {
      exited = `it exited (${sig ?? `code ${code}`})`;
    });
    const stdin = child.stdin as NodeJS.WritableStream;
    await new Promise<void>((resolve, reject) => {
      child.once("error", reject);
      stdin.once("error", reject);
      stdin.end(opts.code, () => resolve());
    });
    const pid = child.pid as number;
    const claimed = await pollUntil(async () => ((await readPidFile(paths.supervisorPid)) === pid ? true : undefined), {
      timeoutMs: CLAIM_TIMEOUT_MS,
      intervalMs: 20,
      abort: () => exited,
    });
    if (!("value" in claimed)) {
      if (!exited) signal(pid, "SIGKILL");
      const why = "aborted" in claimed ? claimed.aborted : `it did not start within ${CLAIM_TIMEOUT_MS / 1000} s`;
      throw new Error(`${why}. Last lines of ${logFile}:\n${await logTail(logFile, 10)}`);
    }
    child.unref();
    return pid;
  } finally {
    await out.close();
  }
}

import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { findRunningAgentapi } from "../agentapi/server.js";
import { type AgentStatus, getStatus, pollStatus } from "../agentapi/status.js";
import { readScreen } from "../agentapi/terminal.js";
import { prepareAgentapiTmp } from "../agentapi/tmp.js";
import { mayTypeExit } from "../goose/mode.js";
import { failedExtensions } from "../goose/screen.js";
import { logTail } from "../lib/command-log.js";
import { startDetached } from "../lib/detached.js";
import { log, phase, StepError, warn } from "../lib/log.js";
import { pollUntil } from "../lib/poll.js";
import { describePortHolder, listensOn } from "../lib/port-owner.js";
import { isRunning, killTree, readPidFile, removePidFile, waitForExit, writePidFile } from "../lib/processes.js";
import { AGENTAPI_SHUTDOWN_MS, endAgentapi, endBounds, settleTurn } from "../lifecycle/agentapi-end.js";
import { verifyChatAfterStop } from "../lifecycle/chat-file.js";
import { endLeftovers } from "../lifecycle/leftovers.js";
import { acquireLifecycleLock, type LifecycleLock, lockPatience } from "../lifecycle/lock.js";
import { stoppedSince } from "../lifecycle/stop-request.js";
import type { GooseMode, ModulePaths } from "../settings/config.js";
import { awaitFirstTurn } from "./first-turn.js";

// AgentAPI itself answers within a second; the bound covers slow disks.
const READY_TIMEOUT_MS = 60_000;
// A Goose that cannot start (no provider, a session it cannot resume) exits
// within a second of its first screen. A Goose working on the task prompt
// stays "running" for the whole turn, so the start must not wait for that.
const SETTLE_TIMEOUT_MS = 5_000;

/**
 * Starts AgentAPI so that it outlives this script and the Coder agent's
 * process group (startDetached), its log opened with the command line.
 */
export async function spawnAgentapi(opts: {
  binary: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  logFile: string;
}): Promise<ChildProcess> {
  return startDetached(opts.binary, opts.args, {
    cwd: opts.cwd,
    env: opts.env,
    logFile: opts.logFile,
    firstLine: `\n--- ${new Date().toISOString()} ${opts.binary} ${opts.args.map((a) => JSON.stringify(a)).join(" ")}\n`,
  });
}

/** Waits for AgentAPI's /status to answer at all. */
export function waitForReady(port: number, opts: { timeoutMs: number; exited: () => string | undefined }) {
  return pollStatus(port, () => true, opts);
}

// AgentAPI answers within tens of milliseconds of its start, and a refused
// connection on loopback costs microseconds, so its first answer is looked
// for often. The screen then takes seconds to settle, and each /status
// request costs both processes CPU that Goose needs to start, so that wait
// asks at the usual interval.
const READY_POLL_MS = 10;

/**
 * Waits until the process this script started is the one listening on the
 * port and answers /status there. Another server on the same port would
 * answer too, so an answer alone proves nothing. The answer is asked for
 * first: it is the cheap check, and who holds the port (a walk through /proc)
 * is looked up only once something answers.
 */
function waitForOwnServer(pid: number, port: number, exited: () => string | undefined) {
  return pollUntil<AgentStatus>(
    async () => {
      const status = await getStatus(port);
      return status && (await listensOn(pid, port)) ? status : undefined;
    },
    { timeoutMs: READY_TIMEOUT_MS, intervalMs: READY_POLL_MS, abort: exited },
  );
}

/**
 * Stops an AgentAPI this start launched when it must not stay: a stop ran
 * meanwhile (the stop must win), or it never became ready. Goose may be
 * answering the task prompt, so its turn is cancelled first, as a stop does,
 * before `/exit` is typed. Under the lifecycle lock, so it never acts on
 * AgentAPI at the same time as a stop; when that stop has ended AgentAPI
 * already, there is nothing left to do. AgentAPI may have written a
 * near-empty chat over the saved one, so the backup is checked too.
 */
async function withdraw(
  pid: number,
  port: number,
  state: { stateFile: string; backupFile: string | null; persistence: boolean; pidFile: string; typeExit: boolean },
  lock: Promise<LifecycleLock | null>,
): Promise<void> {
  const held = await lock;
  try {
    if (await isRunning(pid)) {
      // It has run no turn yet that could be worth waiting for.
      const bounds = endBounds({ turnMs: 0, termMs: AGENTAPI_SHUTDOWN_MS });
      const turn = await settleTurn(port, bounds);
      await endAgentapi(pid, port, bounds, {
        pidFile: state.pidFile,
        typeExit: state.typeExit,
        atPrompt: turn.atPrompt,
      });
    }
    await restoreOverwrittenChat(state);
  } finally {
    await held?.release();
  }
}

/**
 * An AgentAPI that exits before Goose is ready, on its own or stopped, saves
 * the chat it has, an almost empty one, over the saved chat it never loaded;
 * the backup taken for this launch puts it back.
 */
function restoreOverwrittenChat(state: { stateFile: string; backupFile: string | null; persistence: boolean }) {
  return verifyChatAfterStop({
    stateFile: state.stateFile,
    backupFile: state.backupFile,
    persistence: state.persistence,
    wasRunning: true,
  });
}

/**
 * Spawns AgentAPI and records its PID: AgentAPI writes a PID file only when
 * given --pid-file, which it gets only with persistence (buildAgentapiArgs),
 * and the stop script needs one. `exited` says why it exited, once it has.
 */
async function startAgentapi(opts: {
  binary: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  port: number;
  logFile: string;
  pidFile: string;
  persistence: boolean;
}) {
  const child = await spawnAgentapi(opts);
  const pid = child.pid as number;
  let exited: string | undefined;
  child.once("exit", (code, sig) => {
    exited = `AgentAPI exited (${sig ?? `code ${code}`})`;
  });
  if (!opts.persistence) await writePidFile(opts.pidFile, pid);
  log(
    `started AgentAPI (PID ${pid}) on port ${opts.port}: ${path.basename(opts.binary)} ${opts.args.slice(0, opts.args.indexOf("--") + 2).join(" ")} ...`,
  );
  return { child, pid, exited: () => exited };
}

/**
 * Ends an AgentAPI this launch started when its caller has to stop at once
 * (the supervisor standing down for a stop). It has not run a turn, and a
 * killed AgentAPI saves nothing, so the saved chat stays as it was.
 */
async function abandon(pid: number, pidFile: string, why: string): Promise<false> {
  await killTree(pid);
  await waitForExit(pid, 2000);
  await removePidFile(pidFile, pid);
  log(`${why}; AgentAPI (PID ${pid}) was stopped before it was ready`);
  return false;
}

// AgentAPI writes its PID file (--pid-file) within milliseconds of its start;
// the start writes it itself at once when AgentAPI has no such option.
const PID_FILE_MS = 2000;

/** Uses the AgentAPI another start or the supervisor launched meanwhile, once it answers. */
async function useRunning(pid: number, port: number, paths: ModulePaths): Promise<true> {
  log(`AgentAPI (PID ${pid}) was launched meanwhile by another start or the supervisor; not launching a second one`);
  const ready = await waitForReady(port, { timeoutMs: READY_TIMEOUT_MS, exited: () => undefined });
  if (!("value" in ready))
    throw new StepError(
      `AgentAPI (PID ${pid}) is running but does not answer on port ${port}. See ${paths.agentapiLog}.`,
    );
  return true;
}

/**
 * The lifecycle lock for a launch; an `abort` reason instead when the
 * supervisor must stand down meanwhile. Fails, naming the holder, when it
 * stays busy.
 */
async function lockForLaunch(
  paths: ModulePaths,
  abort: (() => string | undefined) | undefined,
): Promise<LifecycleLock | { aborted: string }> {
  const outcome = await acquireLifecycleLock(paths.dir, "launch", { patienceMs: lockPatience, abort }).catch(
    (error: Error) => {
      throw new StepError(`cannot take the lifecycle lock of ${paths.dir}: ${error.message}`);
    },
  );
  if ("lock" in outcome) return outcome.lock;
  if ("aborted" in outcome) return outcome;
  if ("noFolder" in outcome)
    throw new StepError(`${paths.dir} disappeared while Goose was being launched; start again.`);
  throw new StepError(
    `${outcome.busy} held the lifecycle lock of ${paths.dir} and did not release it in ${outcome.waitedMs} ms; if that process is stuck, end it and start again.`,
  );
}

/**
 * Launches AgentAPI and waits until Goose is ready. Returns false when it did
 * not stay up because a stop ran meanwhile, or `abort` gave a reason to stop.
 */
export async function launchAgentapi(opts: {
  binary: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  port: number;
  paths: ModulePaths;
  /** The stop count when this start began (lifecycle/stop-request.ts). */
  stopsSeen: number;
  persistence: boolean;
  stateBackup: string | null;
  gooseMode: GooseMode;
  /** The turn Goose was launched with, as the log names it ("the task prompt"); undefined when it waits for input. */
  firstTurn?: string;
  abort?: () => string | undefined;
}): Promise<boolean> {
  const { port, paths } = opts;
  const state = {
    stateFile: paths.stateFile,
    backupFile: opts.stateBackup,
    persistence: opts.persistence,
    pidFile: paths.pidFile,
    typeExit: mayTypeExit(opts.gooseMode),
  };
  const abortedEarly = opts.abort?.();
  if (abortedEarly) {
    log(`${abortedEarly}; AgentAPI is not launched`);
    return false;
  }
  const agentLog = paths.agentapiLog;
  // The stop count is checked and AgentAPI spawned under the lifecycle lock: a
  // stop that counts itself after the check finds this AgentAPI's PID file, or
  // is seen by the check after Goose is ready.
  const lock = await lockForLaunch(paths, opts.abort);
  if ("aborted" in lock) {
    log(`${lock.aborted}; AgentAPI is not launched`);
    return false;
  }
  let launched: Awaited<ReturnType<typeof startAgentapi>>;
  try {
    if (await stoppedSince(paths.dir, opts.stopsSeen)) {
      log("the workspace's stop script ran while this start was still preparing; AgentAPI is not launched");
      return false;
    }
    // Another start, or the supervisor, launched one meanwhile: one AgentAPI per module folder.
    const running = await findRunningAgentapi(paths.pidFile, port);
    if (running.status === "running") return useRunning(running.pid, port, paths);
    // None runs, and none can start while this holds the lock: whatever has
    // the launch's mark is what the last Goose left.
    await endLeftovers(paths.dir);
    await prepareAgentapiTmp(paths.tmp);
    launched = await startAgentapi({ ...opts, logFile: agentLog, pidFile: paths.pidFile });
    // The lock is let go once the PID file names it, so whoever takes the lock next finds it.
    await pollUntil(async () => ((await readPidFile(paths.pidFile)) === launched.pid ? true : undefined), {
      timeoutMs: PID_FILE_MS,
      intervalMs: 2,
      abort: launched.exited,
    });
  } finally {
    await lock.release();
  }
  const { child, pid, exited } = launched;
  const halted = () => exited() ?? opts.abort?.();
  const relock = async () => {
    const again = await lockForLaunch(paths, opts.abort).catch(() => null);
    return again === null || "aborted" in again ? null : again;
  };
  // A stop counted since this start: it wins. AgentAPI is stopped again if it
  // still runs, and the chat it may have overwritten is put back, under the lock.
  const yieldToStop = async (what: string): Promise<false> => {
    warn(`the workspace's stop script ran while AgentAPI was starting; ${what}`);
    const held = await relock();
    const aborted = held === null && !exited() && opts.abort?.();
    if (aborted) return abandon(pid, paths.pidFile, aborted);
    await withdraw(pid, port, state, Promise.resolve(held));
    return false;
  };

  const ready = await waitForOwnServer(pid, port, halted);
  if (!("value" in ready)) {
    const aborted = !exited() && opts.abort?.();
    if (aborted) return abandon(pid, paths.pidFile, aborted);
    const holder = await describePortHolder(port);
    const why =
      "aborted" in ready
        ? `${ready.aborted} before it was ready`
        : `AgentAPI did not listen and answer on port ${port} within ${READY_TIMEOUT_MS / 1000} s`;
    const busy = holder && !exited() ? ` Port ${port} is held by ${holder}.` : "";
    await (exited() ? restoreOverwrittenChat(state) : withdraw(pid, port, state, relock()));
    throw new StepError(`${why}.${busy} Last lines of ${agentLog}:\n${await logTail(agentLog, 30)}`);
  }
  log(
    `AgentAPI (PID ${pid}) listens on port ${port} (status: ${ready.value.status}, agent type: ${ready.value.agent_type ?? "unknown"})`,
  );

  const settled = await pollStatus(port, (s) => s.status === "stable", {
    timeoutMs: SETTLE_TIMEOUT_MS,
    exited: halted,
  });
  if ("aborted" in settled) {
    const aborted = !exited() && opts.abort?.();
    if (aborted) return abandon(pid, paths.pidFile, aborted);
    // While Goose answers a first prompt AgentAPI may not have reported stable
    // yet when a stop comes and ends it: that is the stop winning, not a crash.
    if (await stoppedSince(paths.dir, opts.stopsSeen)) return yieldToStop("it stopped AgentAPI: the stop wins");
    await restoreOverwrittenChat(state);
    throw new StepError(
      `Goose exited right after it started, and AgentAPI with it. Last lines of ${agentLog}:\n${await logTail(agentLog, 30)}`,
    );
  }
  // Goose goes on without an extension that failed to start, and says so only on its screen.
  const shown = "value" in settled ? await readScreen(port, 1000) : null;
  for (const { name, reason } of typeof shown === "string" ? failedExtensions(shown) : [])
    warn(`Goose runs without its extension '${name}', which did not start: ${reason}`);
  // Also when Goose was still starting: its first turn follows.
  if (opts.firstTurn !== undefined)
    await phase("first-turn", () =>
      awaitFirstTurn({
        port,
        turn: opts.firstTurn as string,
        halted: async () => halted() !== undefined || (await stoppedSince(paths.dir, opts.stopsSeen)),
        lock: relock,
      }),
    );
  if (await stoppedSince(paths.dir, opts.stopsSeen)) return yieldToStop("stopping it again so the stop wins");
  child.unref();
  log(
    "value" in settled
      ? "Goose is ready for input"
      : `Goose is still starting after ${SETTLE_TIMEOUT_MS / 1000} s; it keeps starting in the background`,
  );
  return true;
}

import { readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { lastAgentScreen } from "../agentapi/exit-screen.js";
import { launchGoose } from "../launch/launch.js";
import { ensurePortFree, reuseRunningAgentapi } from "../launch/start-checks.js";
import { log, StepError, stampLogLines, warn } from "../lib/log.js";
import { parsePid } from "../lib/processes.js";
import { recordSupervisorGaveUp } from "../lifecycle/launch-record.js";
import { stoppedSince } from "../lifecycle/stop-request.js";
import { homeDir } from "../settings/config.js";
import { readSupervisorDocument, type SupervisorDocument } from "./document.js";
import { claimSupervisorPid, releaseSupervisorPid } from "./process.js";
import { decideRestart, NO_FAILURES, noteRunEnded, type RestartHistory } from "./restart-policy.js";
import { exists, watchAgentapi } from "./watch.js";

/** What stops the supervisor: the stop script's SIGTERM, handled at once unless a restart is under way. */
class StandDown {
  reason: string | undefined;
  restarting = false;
  private readonly controller = new AbortController();

  constructor(pidFile: string) {
    process.once("SIGTERM", () => {
      this.reason = "the stop script asked the supervisor to stand down";
      this.controller.abort();
      if (this.restarting) return;
      // Nothing is under way that needs finishing. The stop waits for the PID
      // file to go, so removing it is the last thing this process does.
      log(`stood down: ${this.reason}`);
      try {
        if (parsePid(readFileSync(pidFile, "utf8")) === process.pid) rmSync(pidFile);
      } catch {}
      process.exit(0);
    });
  }

  /** Waits, unless told to stand down meanwhile; returns why it must stand down, if it must. */
  async sleep(ms: number): Promise<string | undefined> {
    await delay(ms, undefined, { signal: this.controller.signal }).catch(() => undefined);
    return this.reason;
  }
}

/**
 * A failed restart on one line: what failed (the first line of the error,
 * without the log it goes on to quote) and what Goose showed as it exited.
 * AgentAPI does not always catch that screen before Goose is gone, so the
 * last one seen stands in, said as such.
 */
async function describeFailure(error: unknown, ctx: Context): Promise<string> {
  const message = error instanceof StepError ? error.message : String((error as Error)?.stack ?? error);
  const first = (message.split("\n")[0] ?? "").replace(/ Last lines of .*:$/, "");
  const screen = lastAgentScreen(await readFile(ctx.agentLog, "utf8").catch(() => ""));
  if (screen) ctx.lastScreen = screen;
  if (screen) return `${first} Goose's last screen: "${screen}"`;
  return ctx.lastScreen ? `${first} Goose's last screen at an earlier failed restart: "${ctx.lastScreen}"` : first;
}

interface Context {
  doc: SupervisorDocument;
  home: string;
  standDown: StandDown;
  agentLog: string;
  /** What Goose last showed when a restart failed. */
  lastScreen?: string;
}

/** The start's launch path again, without the prompt; says what went wrong when AgentAPI and Goose did not come up. */
async function restart(ctx: Context): Promise<string | null> {
  const { config } = ctx.doc;
  ctx.standDown.restarting = true;
  try {
    if (await reuseRunningAgentapi(config.paths, config.agentapi.port)) return null;
    await ensurePortFree(config.agentapi.port);
    const { plan, launched } = await launchGoose({
      config,
      tools: ctx.doc.tools,
      gate: ctx.doc.gate,
      home: ctx.home,
      startedAt: Date.now(),
      restart: true,
      stopsSeen: ctx.doc.stops,
      abort: () => ctx.standDown.reason,
    });
    if (!launched) return "the restart was withdrawn for a stop";
    log(`restarted: ${plan.decision.mode} start of Goose session "${plan.sessionName}"`);
    return null;
  } catch (error) {
    return describeFailure(error, ctx);
  } finally {
    ctx.standDown.restarting = false;
  }
}

/** Watch, and restart on every exit the stop did not ask for, until a stop, the folder's removal, or too many failures. */
async function supervise(ctx: Context): Promise<void> {
  const { paths } = ctx.doc.config;
  let history: RestartHistory = NO_FAILURES;
  let run = { restarted: false, startedAt: ctx.doc.since };
  let problem: string | null = null;
  for (;;) {
    const ended =
      problem ??
      (await watchAgentapi({
        paths,
        port: ctx.doc.config.agentapi.port,
        agentLog: ctx.agentLog,
        sleep: (ms) => ctx.standDown.sleep(ms),
      }));
    history = noteRunEnded(history, { ...run, launched: problem === null, endedAt: Date.now() });
    const step = decideRestart({
      history,
      now: Date.now(),
      stopRequested: ctx.standDown.reason !== undefined || (await stoppedSince(paths.dir, ctx.doc.stops)),
      folderPresent: await exists(paths.dir),
      lastProblem: ended,
    });
    if (step.action === "stand-down") return log(`stood down: ${step.reason}`);
    if (step.action === "give-up") {
      warn(`gave up: ${step.reason}`);
      return recordSupervisorGaveUp(paths.launchRecord, step.reason).catch((error) =>
        warn(`could not add the reason to ${paths.launchRecord}: ${(error as Error).message}`),
      );
    }
    log(`${ended}; restart ${step.attempt} in ${step.delayMs} ms`);
    const standDown = await ctx.standDown.sleep(step.delayMs);
    if (standDown) return log(`stood down: ${standDown}`);
    run = { restarted: true, startedAt: Date.now() };
    problem = await restart(ctx);
    if (problem) log(`restart ${step.attempt} failed: ${problem}`);
  }
}

/** The supervisor's entry: one per module folder, gone after a stop, a give-up, or the folder's removal. */
export async function superviseMain(): Promise<number> {
  stampLogLines();
  const doc = readSupervisorDocument();
  const { paths } = doc.config;
  const claim = await claimSupervisorPid(paths, doc.stops);
  if ("leave" in claim) {
    log(`${claim.leave}; this supervisor leaves`);
    return 0;
  }
  const standDown = new StandDown(paths.supervisorPid);
  log(`supervisor (PID ${process.pid}) started for ${paths.dir}`);
  await supervise({ doc, home: homeDir(), standDown, agentLog: path.join(paths.logs, "agentapi.log") });
  // The last act: a stop waiting for this supervisor takes it as gone.
  await releaseSupervisorPid(paths.supervisorPid);
  return 0;
}

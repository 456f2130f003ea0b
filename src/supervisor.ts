import { readFileSync, rmSync } from "node:fs";
import { access, readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { lastAgentScreen } from "./agentapi-exit.js";
import { getStatus } from "./agentapi-status.js";
import { AUTOSAVE_START, autosaveStep, type ChatVersusSaved, compareWithSaved } from "./autosave.js";
import { homeDir, readSettingsDocument, type StartConfig } from "./config.js";
import { type InstalledTools, launchGoose } from "./goose-launch.js";
import { agentapiUrl, getJson } from "./http.js";
import { readStopTarget, recordSupervisorGaveUp } from "./launch-record.js";
import { log, StepError, stampLogLines, warn } from "./log.js";
import { findRunningAgentapi, isAgentapiServer, parsePid, readCmdline } from "./processes.js";
import { decideRestart, NO_FAILURES, noteRunEnded, type RestartHistory } from "./restart-policy.js";
import { ensurePortFree, reuseRunningAgentapi } from "./start-checks.js";
import { saveState } from "./state-save.js";
import { stopRequestedSince } from "./stop-request.js";
import { claimSupervisorPid, releaseSupervisorPid } from "./supervisor-process.js";
import type { DecidedGate } from "./version-gate.js";

const DOCUMENT_KIND = "goose-module-supervisor";

/** What a start hands the supervisor it leaves running: never the task prompt. */
export interface SupervisorDocument {
  kind: typeof DOCUMENT_KIND;
  config: StartConfig;
  tools: InstalledTools;
  gate: DecidedGate;
  /** When that start began: a stop since then ends the watch. */
  since: number;
}

/**
 * A restart resumes the session that was running, so it needs no prompt and
 * can never deliver it again, and no install script; it resumes even with
 * `continue = false`, which asks for a new session per workspace start, not
 * per crash.
 */
export function supervisorDocument(
  config: StartConfig,
  tools: InstalledTools,
  gate: DecidedGate,
  since: number,
): SupervisorDocument {
  const agent = { ...config.agent, prompt: "", continue: true, install_script: { pre: "", post: "" } };
  return { kind: DOCUMENT_KIND, config: { ...config, agent }, tools, gate, since };
}

function readSupervisorDocument(): SupervisorDocument {
  const document = readSettingsDocument() as Partial<SupervisorDocument> | null;
  if (document?.kind !== DOCUMENT_KIND)
    throw new StepError("the supervisor was started without its document; only the start script starts it.");
  return document as SupervisorDocument;
}

// Fast enough to notice an exit within half a second and every turn's end
// (AgentAPI says "running" for at least 2 s per turn); cheap: one /proc read
// and one local GET /status.
const WATCH_MS = 500;
const SAVE_TIMEOUT_MS = 2000;

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

  /** Waits, unless told to stand down meanwhile. */
  async sleep(ms: number): Promise<void> {
    await delay(ms, undefined, { signal: this.controller.signal }).catch(() => undefined);
  }
}

async function exists(dir: string): Promise<boolean> {
  return access(dir).then(
    () => true,
    () => false,
  );
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

/** What AgentAPI shows against what its state file holds; null when /messages does not answer. */
async function chatVersusSaved(port: number, stateFile: string): Promise<ChatVersusSaved | null> {
  const shown = await getJson<{ messages?: Array<{ content?: unknown }> }>(agentapiUrl(port, "/messages"), 2000);
  if (!shown.ok) return null;
  let saved: string[] | null = null;
  try {
    const state = JSON.parse(await readFile(stateFile, "utf8")) as { messages?: Array<{ message?: unknown }> };
    if (Array.isArray(state.messages)) saved = state.messages.map((m) => String(m?.message ?? ""));
  } catch {}
  return compareWithSaved(
    saved,
    (shown.body.messages ?? []).map((m) => String(m?.content ?? "")),
  );
}

/** Saves the chat after a turn has ended, and says how long AgentAPI took to confirm it. */
async function autosave(ctx: Context, pid: number): Promise<void> {
  const started = Date.now();
  const outcome = await saveState(pid, ctx.doc.config.paths.stateFile, ctx.agentLog, SAVE_TIMEOUT_MS);
  (outcome.confirmed ? log : warn)(`autosave after a turn: ${outcome.note} (${Date.now() - started} ms)`);
}

/** Watches the running AgentAPI until it is gone, saving the chat after every turn; returns what ended it. */
async function watch(ctx: Context): Promise<string> {
  const { paths } = ctx.doc.config;
  const { port } = ctx.doc.config.agentapi;
  const found = await findRunningAgentapi(paths.pidFile, port);
  if (found.status !== "running") return `no AgentAPI runs on port ${port} (PID file: ${found.status})`;
  const { pid } = found;
  const since = Date.now();
  const { target } = await readStopTarget(paths.launchRecord, {
    port,
    pidFile: paths.pidFile,
    stateFile: paths.stateFile,
  });
  log(
    `watching AgentAPI (PID ${pid})${target.persistence ? "; the chat is saved after every turn" : `; no autosave (${target.persistenceReason})`}`,
  );
  let turns = AUTOSAVE_START;
  for (;;) {
    await ctx.standDown.sleep(WATCH_MS);
    if (ctx.standDown.reason) return ctx.standDown.reason;
    if (!(await exists(paths.dir))) return `${paths.dir} is gone`;
    const argv = await readCmdline(pid);
    if (argv === null || !isAgentapiServer(argv, port))
      return `AgentAPI (PID ${pid}) exited after ${Math.round((Date.now() - since) / 1000)} s without a stop`;
    if (!target.persistence) continue;
    const step = autosaveStep(turns, (await getStatus(port))?.status ?? null, Date.now());
    const chat = step.save ? await chatVersusSaved(port, paths.stateFile) : null;
    // Not loaded yet, or no answer: the save waits for a later reading.
    if (step.save && (chat === null || chat === "not-loaded")) continue;
    turns = step.state;
    if (chat === "new") await autosave(ctx, pid);
  }
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
    const ended = problem ?? (await watch(ctx));
    history = noteRunEnded(history, { ...run, launched: problem === null, endedAt: Date.now() });
    const step = decideRestart({
      history,
      now: Date.now(),
      stopRequested: ctx.standDown.reason !== undefined || (await stopRequestedSince(paths.dir, ctx.doc.since)),
      folderPresent: await exists(paths.dir),
      lastProblem: ended,
    });
    if (step.action === "stand-down") return log(`stood down: ${step.reason}`);
    if (step.action === "give-up") {
      warn(`gave up: ${step.reason}`);
      return recordSupervisorGaveUp(paths.launchRecord, step.reason);
    }
    log(`${ended}; restart ${step.attempt} in ${step.delayMs} ms`);
    await ctx.standDown.sleep(step.delayMs);
    if (ctx.standDown.reason) return log(`stood down: ${ctx.standDown.reason}`);
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
  const other = await claimSupervisorPid(paths.supervisorPid, paths.dir);
  if (other !== null) {
    log(`supervisor (PID ${other}) already watches AgentAPI; this one leaves`);
    return 0;
  }
  const standDown = new StandDown(paths.supervisorPid);
  log(`supervisor (PID ${process.pid}) started for ${paths.dir}`);
  await supervise({ doc, home: homeDir(), standDown, agentLog: path.join(paths.logs, "agentapi.log") });
  // The last act: a stop waiting for this supervisor takes it as gone.
  await releaseSupervisorPid(paths.supervisorPid);
  return 0;
}

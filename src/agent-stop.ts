import { getStatus, pollStatus } from "./agentapi-status.js";
import { agentapiUrl, postJson } from "./http.js";
import { log, warn } from "./log.js";
import { findRunningAgentapi, killTree, removePidFile, signal, waitForExit } from "./processes.js";

export interface StopTimeouts {
  /** How long a running turn may finish (the template's stop_turn_wait_seconds). */
  turn_ms: number;
  /** How long AgentAPI may take to exit after SIGTERM (the template's stop_sigterm_wait_seconds). */
  term_ms: number;
  save_ms: number;
  http_ms: number;
  cancel_ms: number;
  exit_ms: number;
}

// Each step has its own bound. With the template's defaults (turn 5 s, SIGTERM
// 10 s), a stop that meets a hung AgentAPI at every step ends within 30 s
// (Kubernetes' default grace period): 2 s save, then either 5 s turn + 3 s turn
// cancel + 1 s second save + 2 s for Goose to exit, or 1 s for Goose to exit +
// 3 s cancel + 1 s second save + 2 s to exit, then 2 x 2 s snapshot, 10 s
// SIGTERM wait and 2 s for SIGKILL. The cancel bound covers AgentAPI's
// definition of idle, a screen unchanged for 2 s (GET /status, coder/agentapi
// lib/screentracker @ v0.12.2). A normal idle stop takes a fraction of a second.
export const STEP_TIMEOUTS = { save_ms: 2000, http_ms: 2000, cancel_ms: 3000, exit_ms: 2000 };

// AgentAPI's own shutdown takes at most 10 s: 5 s to drain HTTP, then 5 s for
// the agent to exit before it is killed (runServer in cmd/server/server.go and
// Close in lib/termexec/termexec.go, coder/agentapi @ v0.12.2).
export const AGENTAPI_SHUTDOWN_MS = 10_000;

// AgentAPI writes raw input to Goose's terminal as keystrokes. Observed with
// Goose 1.46.1: `/exit` + Enter at the idle prompt ends Goose with exit 0 in
// about 0.1 s, and a ^C byte during a turn cancels the turn and keeps Goose
// running; SIGINT at the idle prompt is ignored, which is why AgentAPI's own
// SIGTERM path always ended in its SIGKILL 5 s later.
const EXIT_INPUT = "/exit\r";
const CANCEL_INPUT = "\u0003";
// Goose at its prompt leaves on /exit in about 0.1 s.
const FIRST_EXIT_MS = 1000;

async function status(port: number): Promise<string | null> {
  return (await getStatus(port))?.status ?? null;
}

function typeRaw(port: number, content: string, timeoutMs: number) {
  return postJson(agentapiUrl(port, "/message"), { type: "raw", content }, timeoutMs);
}

async function waitStable(port: number, timeoutMs: number): Promise<boolean> {
  return "value" in (await pollStatus(port, (s) => s.status === "stable", { timeoutMs }));
}

// How long a keystroke may take to change the screen AgentAPI polls every 25 ms.
const SCREEN_CHANGE_MS = 500;

/** Waits for AgentAPI to see the screen change ("running"), then settle ("stable"), within one bound. */
async function waitChangeThenStable(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  await pollStatus(port, (s) => s.status === "running", {
    timeoutMs: Math.min(SCREEN_CHANGE_MS, timeoutMs),
    intervalMs: 10,
  });
  return waitStable(port, Math.max(0, deadline - Date.now()));
}

/** The AgentAPI the PID file names, if it still runs on this port; says what it found. */
export async function findAgentapiToStop(pidFile: string, port: number): Promise<number | null> {
  const found = await findRunningAgentapi(pidFile, port);
  const messages: Record<typeof found.status, string> = {
    running: `AgentAPI is PID ${found.pid}`,
    "no-file": `no PID in ${pidFile}; nothing to signal`,
    dead: `PID ${found.pid} from ${pidFile} is not running; nothing to signal`,
    foreign: `PID ${found.pid} from ${pidFile} is not this AgentAPI (its command line differs); it is left alone`,
  };
  log(messages[found.status]);
  return found.status === "running" ? found.pid : null;
}

/** Lets a running turn end; past the bound, cancels it the way a user would, so Goose can still exit by itself. */
async function endTurn(port: number, t: StopTimeouts): Promise<{ note: string; ranTurn: boolean; cancelled: boolean }> {
  const now = await status(port);
  if (now === null) return { note: "status unavailable", ranTurn: false, cancelled: false };
  if (now !== "running") return { note: `agent ${now}`, ranTurn: false, cancelled: false };
  if (await waitStable(port, t.turn_ms)) return { note: "the running turn finished", ranTurn: true, cancelled: false };
  await typeRaw(port, CANCEL_INPUT, 1000);
  if (await waitStable(port, t.cancel_ms)) {
    return {
      note: `the turn still ran after ${t.turn_ms} ms and was cancelled; Goose keeps the message and continues it at the next start`,
      ranTurn: true,
      cancelled: true,
    };
  }
  return {
    note: `the agent was still busy after ${t.turn_ms} ms and a cancel (a turn, or Goose still starting); stopping it anyway`,
    ranTurn: true,
    cancelled: true,
  };
}

/** The turn step: whether a turn ran (the chat then needs saving again) or was cancelled, said in the log. */
export async function settleTurn(port: number, t: StopTimeouts): Promise<{ ranTurn: boolean; cancelled: boolean }> {
  const outcome = await endTurn(port, t);
  log(`turn: ${outcome.note}`);
  return outcome;
}

/**
 * Types /exit into an idle Goose and waits for it to leave. AgentAPI also says
 * "stable" while Goose answers the -i/-t text of `goose run --interactive`
 * (Goose 1.46.1 draws no spinner for that turn) and Goose drops what is typed
 * meanwhile, so when /exit does nothing a ^C cancels such a turn and /exit is
 * typed once more. Returns null once Goose has gone, else why it has not.
 */
async function exitByItself(pid: number, port: number, t: StopTimeouts, opts: StopOptions): Promise<string | null> {
  const typed = await typeRaw(port, EXIT_INPUT, 1000);
  if (!typed.ok) return `typing /exit failed (${typed.error})`;
  if (await waitForExit(pid, opts.turnCancelled ? t.exit_ms : FIRST_EXIT_MS)) return null;
  if (opts.turnCancelled) return `Goose did not exit within ${t.exit_ms} ms of /exit`;
  await typeRaw(port, CANCEL_INPUT, 1000);
  // AgentAPI records the screen only once it has seen it change and settle;
  // leaving before that would lose what the cancel showed, and its save.
  await waitChangeThenStable(port, t.cancel_ms);
  await opts.saveAgain();
  const again = await typeRaw(port, EXIT_INPUT, 1000);
  if (again.ok && (await waitForExit(pid, t.exit_ms))) return null;
  return `Goose did not exit on /exit, nor on a Ctrl+C and /exit within ${FIRST_EXIT_MS + t.cancel_ms + t.exit_ms} ms`;
}

export interface StopOptions {
  /** Removed once AgentAPI has gone, while it still names it. */
  pidFile: string;
  /** The turn step already cancelled a turn, so Goose is at its prompt. */
  turnCancelled: boolean;
  /** Saves the chat again after a cancel, before Goose leaves. */
  saveAgain: () => Promise<void>;
  /** False when Enter could answer a tool approval instead of reaching the prompt (goose-mode.ts). */
  typeExit: boolean;
}

/** Asks an idle Goose to exit by itself (AgentAPI then saves and exits); SIGTERM and SIGKILL only when that fails. */
export async function stopAgentapi(pid: number, port: number, t: StopTimeouts, opts: StopOptions): Promise<void> {
  await endAgentapi(pid, port, t, opts);
  await removePidFile(opts.pidFile, pid);
}

async function endAgentapi(pid: number, port: number, t: StopTimeouts, opts: StopOptions): Promise<void> {
  if (!opts.typeExit) {
    log(
      "goose_mode asks before tool calls, and /exit + Enter would answer a pending approval with Allow; sending SIGTERM",
    );
  } else if ((await status(port)) === "stable") {
    const problem = await exitByItself(pid, port, t, opts);
    if (problem === null) return log("Goose exited on /exit, and AgentAPI with it");
    log(`${problem}; sending SIGTERM`);
  } else {
    log("Goose is not idle at its prompt; sending SIGTERM");
  }
  signal(pid, "SIGTERM");
  if (await waitForExit(pid, t.term_ms)) return log("AgentAPI exited after SIGTERM");
  const children = await killTree(pid);
  await waitForExit(pid, 2000);
  warn(
    `AgentAPI did not exit within ${t.term_ms} ms of SIGTERM; sent SIGKILL to it and to ${children.length} agent process group(s)`,
  );
}

import { getStatus } from "../agentapi/status.js";
import { readScreen, typeRaw } from "../agentapi/terminal.js";
import { agentPhase, CANCEL_INPUT, EXIT_INPUT, inputLine } from "../goose/screen.js";
import { log, warn } from "../lib/log.js";
import { pollUntil } from "../lib/poll.js";
import { isRunning, killTree, removePidFile, signal, waitForExit } from "../lib/processes.js";

/**
 * The graceful end of AgentAPI and its Goose, shared by the stop and by a
 * start that must withdraw the AgentAPI it launched: let a running turn end
 * (or cancel it), type `/exit` at Goose's prompt, and only when that fails,
 * SIGTERM then SIGKILL. Each step has its own bound in ms.
 */
export interface EndBounds {
  /** Whether a turn runs: GET /status, and Goose's screen when it says "stable". */
  look: number;
  /** A running turn finishing by itself (stop_turn_wait_seconds). */
  turn: number;
  /** Ctrl+C, then AgentAPI seeing the screen settle (unchanged for 2 s; GET /status, coder/agentapi lib/screentracker @ v0.12.2). */
  cancel: number;
  /** Goose's prompt seen on its screen, unsent text cleared from it, `/exit` typed, and Goose and AgentAPI gone (a real Goose leaves in about 0.13 s). */
  exit: number;
  /** AgentAPI's exit after SIGTERM (stop_sigterm_wait_seconds). */
  sigterm: number;
  /** The processes gone after SIGKILL. */
  sigkill: number;
}

/** The end's bounds: the template's for the turn and for SIGTERM, fixed ones for the rest. */
export function endBounds(template: { turnMs: number; termMs: number }): EndBounds {
  return { look: 1000, turn: template.turnMs, cancel: 2500, exit: 2000, sigterm: template.termMs, sigkill: 1000 };
}

// AgentAPI's own shutdown takes at most 10 s: 5 s to drain HTTP, then 5 s for
// the agent to exit before it is killed (runServer in cmd/server/server.go and
// Close in lib/termexec/termexec.go, coder/agentapi @ v0.12.2).
export const AGENTAPI_SHUTDOWN_MS = 10_000;

/** What the log says once Goose has left on the typed `/exit`. */
const GRACEFUL = "Goose exited on /exit, and AgentAPI with it";

// Every request to AgentAPI is bounded by what is left of its step, and by this.
const REQUEST_MS = 1000;

/** A step's deadline. */
class Step {
  private readonly end: number;
  constructor(readonly bound: number) {
    this.end = Date.now() + bound;
  }
  left(): number {
    return Math.max(0, this.end - Date.now());
  }
  /** A request's bound: never past the step's end, and at least 1 ms so it is made at all. */
  request(): number {
    return Math.max(1, Math.min(REQUEST_MS, this.left()));
  }
}

function typeWithin(port: number, content: string, step: Step) {
  return typeRaw(port, content, step.request());
}

async function agentState(port: number, step: Step): Promise<ReturnType<typeof agentPhase>> {
  const now = await getStatus(port, step.request());
  return agentPhase(now?.status ?? null, now?.status === "stable" ? await readScreen(port, step.request()) : null);
}

/** Polls until Goose is idle at its prompt, within the step. */
async function waitIdle(port: number, step: Step): Promise<boolean> {
  const idle = async () => ((await agentState(port, step)) === "idle" ? true : undefined);
  return "value" in (await pollUntil(idle, { timeoutMs: step.left(), intervalMs: 100 }));
}

/** Polls until AgentAPI tells whether a turn runs, within the step; else what it did not tell. */
async function lookForTurn(port: number, step: Step): Promise<ReturnType<typeof agentPhase>> {
  let last: ReturnType<typeof agentPhase> = "no-status";
  const known = async () => {
    last = await agentState(port, step);
    return last === "turn" || last === "idle" ? last : undefined;
  };
  await pollUntil(known, { timeoutMs: step.left(), intervalMs: 100 });
  return last;
}

// How long a keystroke may take to change the screen AgentAPI polls every 25 ms.
const SCREEN_CHANGE_MS = 500;

/**
 * After a cancel: waits for AgentAPI to see the screen change ("running"),
 * then settle with Goose at its prompt, within the step. AgentAPI records the
 * screen only once it has seen it settle; leaving before that would lose what
 * the cancel showed, and its save.
 */
async function waitChangeThenIdle(port: number, step: Step): Promise<boolean> {
  const changed = async () => ((await getStatus(port, step.request()))?.status === "running" ? true : undefined);
  await pollUntil(changed, { timeoutMs: Math.min(SCREEN_CHANGE_MS, step.left()), intervalMs: 10 });
  return waitIdle(port, step);
}

/** Where the turn step left Goose: whether a turn ran (the chat then needs saving again), and whether it is at its prompt. */
export interface TurnOutcome {
  ranTurn: boolean;
  atPrompt: boolean;
}

/** Lets a running turn end; past the bound, cancels it the way a user would, so Goose can still exit by itself. */
async function endTurn(port: number, bounds: EndBounds): Promise<TurnOutcome & { note: string }> {
  const now = await lookForTurn(port, new Step(bounds.look));
  if (now === "no-status") return { note: "status unavailable", ranTurn: false, atPrompt: false };
  if (now === "idle") return { note: "agent idle at its prompt", ranTurn: false, atPrompt: true };
  // A turn, or a screen that did not come in time: Goose must be seen at its prompt before /exit.
  if (await waitIdle(port, new Step(bounds.turn)))
    return { note: "the running turn finished", ranTurn: true, atPrompt: true };
  const cancel = new Step(bounds.cancel);
  await typeWithin(port, CANCEL_INPUT, cancel);
  if (await waitChangeThenIdle(port, cancel)) {
    return {
      note: `the turn still ran after ${bounds.turn} ms and was cancelled; Goose keeps the message and continues it at the next start`,
      ranTurn: true,
      atPrompt: true,
    };
  }
  return {
    note: `the agent was still busy after ${bounds.turn} ms and a cancel (a turn, or Goose still starting); stopping it anyway`,
    ranTurn: true,
    atPrompt: false,
  };
}

/** The turn step, said in the log. */
export async function settleTurn(port: number, bounds: EndBounds): Promise<TurnOutcome> {
  const { note, ...outcome } = await endTurn(port, bounds);
  log(`turn: ${note}`);
  return outcome;
}

export interface EndOptions {
  /** Removed once AgentAPI has gone, while it still names it. */
  pidFile: string;
  /** False when Enter could answer a tool approval instead of reaching the prompt (goose/mode.ts). */
  typeExit: boolean;
  /** The turn step left Goose idle at its prompt, where `/exit` reaches it. */
  atPrompt: boolean;
}

/**
 * Asks an idle Goose to exit by itself (AgentAPI then saves and exits);
 * SIGTERM and SIGKILL only when that fails. True when Goose left on the typed
 * `/exit` and AgentAPI with it: Goose closed its database itself.
 */
export async function endAgentapi(pid: number, port: number, bounds: EndBounds, opts: EndOptions): Promise<boolean> {
  const onExit = await askThenSignal(pid, port, bounds, opts);
  await removePidFile(opts.pidFile, pid);
  return onExit;
}

/** Polls until the screen shows Goose's input line (or AgentAPI has no screen to show), within the step. */
async function waitInputLine(port: number, step: Step): Promise<"empty" | "text" | "absent" | null> {
  const drawn = async () => {
    const now = await readScreen(port, step.request());
    if (now === null) return undefined;
    if (now === "absent") return now;
    const line = inputLine(now);
    return line === "none" ? undefined : line;
  };
  const found = await pollUntil(drawn, { timeoutMs: step.left(), intervalMs: 25 });
  return "value" in found ? found.value : null;
}

/** How the exit step ended: AgentAPI gone (and how, for the log; `onExit` once Goose had `/exit`), or why the stop must signal it. */
type ExitOutcome = { gone: string; onExit?: true } | { problem: string };

/**
 * After a request of the exit step got no answer: AgentAPI may have acted on
 * it and be leaving, as it does when Goose exits (AgentAPI 0.11.8 ends as soon
 * as its agent has, without finishing the requests in flight: runServer in
 * cmd/server/server.go, coder/agentapi @ v0.11.8). So the stop looks at the
 * PID, within what is left of the step, before it calls anything a failure.
 */
async function afterNoAnswer(pid: number, step: Step, what: string, error: string): Promise<ExitOutcome> {
  const waited = Date.now();
  if (await waitForExit(pid, step.left()))
    return {
      gone: `AgentAPI closed the connection of ${what} without answering (${error}) and exited ${Date.now() - waited} ms later`,
    };
  return {
    problem: `${what} got no answer (${error}), and AgentAPI (PID ${pid}) still ran at the end of the ${step.bound} ms exit step`,
  };
}

/**
 * Waits for Goose's prompt, then empties its input line when text waits there
 * unsent: `/exit` would be appended to it, and Goose 1.46.1 then took the
 * line as a message. Null once the line is empty (or AgentAPI has no screen to
 * show), else how the step ended.
 */
async function clearInputLine(pid: number, port: number, step: Step): Promise<ExitOutcome | null> {
  const line = await waitInputLine(port, step);
  if (line === null) return { problem: `Goose's prompt was not on its screen within ${step.bound} ms` };
  if (line !== "text") return null;
  const typed = await typeWithin(port, CANCEL_INPUT, step);
  if (!typed.ok && !typed.answered)
    return afterNoAnswer(pid, step, "the Ctrl+C that clears Goose's input line", typed.error);
  if (!typed.ok) return { problem: `clearing the unsent text in Goose's input line failed (${typed.error})` };
  const empty = async () => {
    const now = await readScreen(port, step.request());
    return typeof now === "string" && inputLine(now) === "empty" ? true : undefined;
  };
  if (!("value" in (await pollUntil(empty, { timeoutMs: step.left(), intervalMs: 25 }))))
    return { problem: "Goose's input line still held unsent text after Ctrl+C" };
  log("cleared text left unsent in Goose's input line (Goose never received it; the chat keeps it)");
  return null;
}

/** Types /exit into Goose at its prompt and waits for AgentAPI to leave with it. */
async function exitByItself(pid: number, port: number, step: Step): Promise<ExitOutcome> {
  const cleared = await clearInputLine(pid, port, step);
  if (cleared !== null) return cleared;
  const typed = await typeWithin(port, EXIT_INPUT, step);
  if (!typed.ok && typed.answered) return { problem: `typing /exit failed (${typed.error})` };
  if (!typed.ok) {
    const after = await afterNoAnswer(pid, step, "the /exit request", typed.error);
    return "gone" in after ? { gone: `${GRACEFUL}: ${after.gone}`, onExit: true } : after;
  }
  if (await waitForExit(pid, step.left())) return { gone: GRACEFUL, onExit: true };
  return { problem: `Goose did not exit within ${step.bound} ms of /exit` };
}

async function askThenSignal(pid: number, port: number, bounds: EndBounds, opts: EndOptions): Promise<boolean> {
  let why: string;
  if (!opts.typeExit) {
    why = "goose_mode asks before tool calls, and /exit + Enter would answer a pending approval with Allow";
  } else if (!opts.atPrompt) {
    why = "Goose is not idle at its prompt";
  } else {
    const outcome = await exitByItself(pid, port, new Step(bounds.exit));
    if ("gone" in outcome) {
      log(outcome.gone);
      return outcome.onExit === true;
    }
    why = outcome.problem;
  }
  // AgentAPI may have ended by itself during an earlier step (Goose exited, or
  // it crashed): a PID that is gone is never signalled, since it may be
  // another process's by now.
  if (!(await isRunning(pid))) {
    log(`${why}; AgentAPI (PID ${pid}) had exited by itself meanwhile, so nothing was signalled`);
    return false;
  }
  log(`${why}; sending SIGTERM`);
  signal(pid, "SIGTERM");
  if (await waitForExit(pid, bounds.sigterm)) {
    log("AgentAPI exited after SIGTERM");
    return false;
  }
  const children = await killTree(pid);
  // A killed process is gone only once it has run its exit, which on a busy
  // machine can wait for the CPU: each is waited for, so the stop never
  // reports an end that has not happened yet.
  const killed = [pid, ...children];
  const gone = await Promise.all(killed.map((one) => waitForExit(one, bounds.sigkill)));
  const left = killed.filter((_, i) => !gone[i]);
  warn(
    `AgentAPI did not exit within ${bounds.sigterm} ms of SIGTERM; sent SIGKILL to it and to ${children.length} agent process group(s)${left.length === 0 ? "" : `, and PID(s) ${left.join(", ")} were still there ${bounds.sigkill} ms later`}`,
  );
  return false;
}

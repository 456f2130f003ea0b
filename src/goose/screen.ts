import type { ScreenRead } from "../agentapi/terminal.js";

// Goose's terminal under AgentAPI: every text the module types into it and
// every line it recognises on it, for the start, the stop and the chat
// cleaning alike. When a Goose release changes its prompt, this file changes.
// Observed with Goose 1.46.1; the sources named below are in aaif-goose/goose
// @ v1.46.1.

// AgentAPI writes raw input to Goose's terminal as keystrokes. `/exit` + Enter
// at the idle prompt ends Goose with exit 0 in about 0.1 s; a ^C byte during a
// turn cancels the turn and keeps Goose running; SIGINT at the idle prompt is
// ignored, which is why AgentAPI's own SIGTERM path always ended in its
// SIGKILL 5 s later.
export const EXIT_INPUT = "/exit\r";
// Also what clears unsent text from the input line: with text there, Ctrl+C
// empties the line and nothing else (CtrlCHandler in
// crates/goose-cli/src/session/input.rs).
export const CANCEL_INPUT = "\u0003";
/** Enter: sends what waits in the input line. */
export const ENTER_INPUT = "\r";

// Goose draws this under its output while a turn runs, and typed text then
// steers the turn instead of reaching the prompt (live_input.rs in
// crates/goose-cli/src/session). It is the only sign of the turn that answers
// the -i text of `goose run --interactive`: Goose draws no spinner for it, so
// AgentAPI says "stable" throughout.
export const STEER_HINT = "[Enter steer · Tab queue · Ctrl+C stop]";

// What Goose shows after "> " while its input line is empty (the hints in
// crates/goose-cli/src/session/completion.rs); each is matched by its start.
const SEND_HINT = "Enter to send";
const CTRL_C_AGAIN_HINT = "Press Ctrl+C again to exit";
const EMPTY_INPUT_HINTS = [SEND_HINT, CTRL_C_AGAIN_HINT, "Interrupted, what should goose work on instead?"];
// The whole line of the Ctrl+C hint, as AgentAPI keeps it in a message.
const CTRL_C_AGAIN_LINE = `${CTRL_C_AGAIN_HINT}, or type new instructions to continue`;

// The context bar Goose draws above every prompt, "  ━━╌╌ 0% 15/128k"
// (display_context_usage in crates/goose-cli/src/session/output.rs); none is
// drawn above the first turn. Matched on a trimmed line.
const CONTEXT_BAR = /^[━╌]+\s+\d+%\s+\S+\/\S+$/u;
// The spinner while a turn runs or extensions load, "◐  Sampling ...".
const SPINNER = /^[◐◓◑◒]\s/u;
// The time a reply took, "⏱ 0.48s".
const REPLY_TIME = /^⏱\s+[0-9.]+m?s$/u;

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const STEER_LINE = new RegExp(`^>\\s+${escaped(STEER_HINT)}$`, "u");
const SEND_PROMPT = new RegExp(`^>(\\s+${escaped(SEND_HINT)}\\b.*)?$`, "u");

/** Whether a line (trimmed) is Goose's context bar. */
export function isContextBar(line: string): boolean {
  return CONTEXT_BAR.test(line.trim());
}

/**
 * Where the screen ends: at Goose's prompt with an empty input line, at its
 * prompt with unsent text in the line, or elsewhere. The prompt is a last line
 * starting with "> " that is not the steer line. Observed with Goose 1.46.1:
 * right after it has stored the task prompt, and before it draws the steer
 * line, the screen ends at the banner, and typed text is lost or steers the
 * turn; text typed there before the reply is echoed by the terminal, its Enter
 * is lost, and the text waits unsent in the input line after the reply.
 * An empty line always shows a hint after "> "; a bare ">" holds text that
 * does not show, such as a newline (Ctrl+J): Goose 1.46.1 then took a typed
 * `/exit` as the message "\n/exit" and started a turn instead of exiting.
 */
export function inputLine(shown: string): "empty" | "text" | "none" {
  const last = shown
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line !== "")
    .at(-1);
  if (last === undefined || !/^>( |$)/.test(last) || last.includes(STEER_HINT)) return "none";
  const typed = last.slice(1).trim();
  return EMPTY_INPUT_HINTS.some((hint) => typed.startsWith(hint)) ? "empty" : "text";
}

/**
 * Where Goose is, from AgentAPI's status (null: no answer) and, when that is
 * "stable", Goose's screen: working on a turn, idle at its prompt, or not
 * known yet because the status or the screen did not come.
 */
export function agentPhase(status: string | null, shown: ScreenRead): "turn" | "idle" | "no-status" | "no-screen" {
  if (status === null) return "no-status";
  if (status !== "stable") return "turn";
  if (shown === null) return "no-screen";
  // Without the stream (an AgentAPI that has none), "stable" is all there is to go on.
  if (shown === "absent") return "idle";
  return inputLine(shown) === "none" ? "turn" : "idle";
}

/**
 * What Goose's screen says of the turn it was launched with: still running,
 * or answered, with its input line empty or holding text. Observed with
 * Goose 1.46.1: it draws no spinner for that turn and reads no keyboard; a
 * chat message AgentAPI types meanwhile is echoed by the terminal, its Enter
 * is lost, and after the reply the text waits in the input line below the
 * context bar, wrapped over more lines when it is longer than one.
 */
export function firstTurn(shown: string): "running" | "empty" | "text" {
  const lines = shown.split("\n").map((line) => line.trimEnd());
  let bar = lines.length - 1;
  while (bar >= 0 && !isContextBar(lines[bar] as string)) bar--;
  if (bar < 0) return "running";
  const input = lines.slice(bar + 1).filter((line) => line !== "");
  const first = input[0];
  if (first === undefined) return "running";
  const line = inputLine(first);
  // A later turn runs below (its steer line): its end is waited for too.
  if (line === "none" || input.some((typed) => typed.includes(STEER_HINT))) return "running";
  return input.length > 1 ? "text" : line;
}

/**
 * Goose's status lines, as a real Goose 1.46.1 drew them under AgentAPI (the
 * spinner while a turn runs or extensions load, the steer line, the context
 * bar, the reply's time, the idle prompt and its placeholder, the Ctrl+C
 * hint). AgentAPI saves whatever the screen showed as the last agent message,
 * so a stop during a turn saved a message made of nothing but these lines.
 */
const STATUS_LINES: RegExp[] = [SPINNER, STEER_LINE, CONTEXT_BAR, REPLY_TIME, SEND_PROMPT];

function isStatusLine(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === "" || trimmed === CTRL_C_AGAIN_LINE || STATUS_LINES.some((pattern) => pattern.test(trimmed));
}

/** True for an agent message that shows no words of Goose's, only its status. */
export function isStatusOnly(text: string): boolean {
  return text.split("\n").every(isStatusLine);
}

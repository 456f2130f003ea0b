import type { ScreenRead } from "../agentapi/terminal.js";

// Goose's terminal under AgentAPI: every text the module types into it and
// every line it recognises on it, for the start, the stop and the chat
// cleaning alike. When a Goose release changes its screen, this file changes,
// and test/goose-facts/ gets that release's lines. Read from upstream Goose,
// aaif-goose/goose at v1.47.0 (the paths below are in crates/goose-cli/src),
// and observed with its build.

// AgentAPI writes raw input to Goose's terminal as keystrokes. `/exit` + Enter
// at the idle prompt ends Goose with exit 0. AgentAPI's own shutdown sends
// SIGINT instead, which cancels a turn (tokio's ctrl_c in
// process_agent_response, session/mod.rs) and, that handler installed for the
// process's life, no longer ends Goose, so it ends in AgentAPI's SIGKILL 5 s
// later. While a turn runs the terminal is not raw, so a ^C byte becomes that
// SIGINT: the turn is cancelled and Goose keeps running.
export const EXIT_INPUT = "/exit\r";
// Also what clears unsent text from the input line: with text there, Ctrl+C
// empties the line and nothing else (CtrlCHandler in session/input.rs).
export const CANCEL_INPUT = "\u0003";
/** Enter: sends what waits in the input line. */
export const ENTER_INPUT = "\r";

// What Goose shows after "> " while its input line is empty (the hints in
// session/completion.rs); each is matched by its start.
const CTRL_C_AGAIN_HINT = "Press Ctrl+C again to exit";
const EMPTY_INPUT_HINTS = ["Enter to send", CTRL_C_AGAIN_HINT, "Interrupted, what should goose work on instead?"];
// The whole line of the Ctrl+C hint, as AgentAPI keeps it in a message.
const CTRL_C_AGAIN_LINE = `${CTRL_C_AGAIN_HINT}, or type new instructions to continue`;
// The idle prompt, with its placeholder.
const SEND_PROMPT = /^>(\s+Enter to send\b.*)?$/u;

// The context bar Goose draws above every prompt, "  ━━╌╌ 0% 15/128k"
// (display_context_usage in session/output.rs); none is drawn above the first
// turn. Matched on a trimmed line.
const CONTEXT_BAR = /^[━╌]+\s+\d+%\s+\S+\/\S+$/u;
// The time a typed turn took, "⏱ 0.48s" (handle_message_input in session/mod.rs).
const REPLY_TIME = /^⏱\s+[0-9.]+m?s$/u;
// A ^C typed during a turn is echoed by the terminal where the cursor is, and
// Goose's answer to the cancel follows on the same line: "^CYes — what would
// you like me to do?" (handle_interrupted_messages in session/mod.rs).
const ECHOED_CTRL_C = /^(?:\^C)+(?=Yes — what would you like me to do\?)/gmu;

// The lines that only show Goose at work, each removed with its newline:
// cliclack's spinner, drawn from column 0 as a frame, two spaces and the
// message ("◐  Sampling ...  (Ctrl+C to interrupt)" while a typed turn runs,
// ThinkingIndicator in session/output.rs; "◒  starting 8 extensions: …" while
// extensions load, session/builder.rs), left behind whenever text echoed
// during a turn moves the cursor off the line it redraws; and the lines of
// Goose 1.5x's extensions loading in the background
// (show_loading_extensions_background, show_waiting_for_extensions,
// show_extensions_ready in session/output.rs).
const PASSING_LINES =
  /^(?:[◐◓◑◒] {2}\S.*|[ \t]*(?:⏳ (?:loading extensions in background|waiting for extensions to finish loading)\.\.\.|✓ extensions ready)[ \t]*)$\n?/gmu;

/** Whether a line (trimmed) is Goose's context bar. */
export function isContextBar(line: string): boolean {
  return CONTEXT_BAR.test(line.trim());
}

/**
 * Where the screen ends: at Goose's prompt with an empty input line, at its
 * prompt with unsent text in the line, or elsewhere. The prompt is a last line
 * starting with "> " (rustyline's prompt, read_paste_aware_input in
 * session/paste.rs); while a turn runs the last line is Goose's output or its
 * spinner, and what is typed meanwhile is only echoed by the terminal until
 * the next prompt reads it (get_input in session/input.rs).
 * An empty line always shows a hint after "> "; a bare ">" holds text that
 * does not show, such as a newline (Ctrl+J): a typed `/exit` then makes the
 * message "\n/exit", which does not start with "/", so Goose takes it as a
 * message to the model and starts a turn instead of exiting (get_input).
 */
export function inputLine(shown: string): "empty" | "text" | "none" {
  const last = shown
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line !== "")
    .at(-1);
  if (last === undefined || !/^>( |$)/.test(last)) return "none";
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
 * or answered, with its input line empty or holding text. Goose draws no
 * spinner for that turn (run_interactive hands it to process_message, and
 * only a typed turn shows one: session/mod.rs), so AgentAPI says "stable"
 * throughout and takes a chat message. The terminal, not raw yet, echoes it
 * and turns its Enter into a newline, which Goose's Ctrl+J binding keeps in
 * the line (get_newline_key in session/input.rs): after the reply the text
 * waits in the input line below the context bar, over more rows when it is
 * longer than one. A message Goose took shows an empty row below its line,
 * then that turn's spinner and output (handle_message_input in mod.rs).
 */
export function firstTurn(shown: string): "running" | "empty" | "text" {
  const lines = shown.split("\n").map((line) => line.trimEnd());
  let bar = lines.length - 1;
  while (bar >= 0 && !isContextBar(lines[bar] as string)) bar--;
  if (bar < 0) return "running";
  const rows = lines.slice(bar + 1);
  const start = rows.findIndex((row) => row !== "");
  const line = start < 0 ? "none" : inputLine(rows[start] as string);
  if (line === "none") return "running";
  const gap = rows.indexOf("", start);
  // A later turn runs below: its end is waited for too.
  if (gap >= 0 && rows.slice(gap).some((row) => row !== "")) return "running";
  return (gap < 0 ? rows.length : gap) - start > 1 ? "text" : line;
}

/**
 * Goose's status lines besides the passing ones (the context bar, the reply's
 * time, the idle prompt and its placeholder, the Ctrl+C hint). AgentAPI saves
 * whatever the screen showed as the last agent message, so a stop during a
 * turn saved a message made of nothing but such lines.
 */
const STATUS_LINES: RegExp[] = [CONTEXT_BAR, REPLY_TIME, SEND_PROMPT];

function isStatusLine(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === "" || trimmed === CTRL_C_AGAIN_LINE || STATUS_LINES.some((pattern) => pattern.test(trimmed));
}

/**
 * Whether every line is a status line, read up to the first that is not: the
 * task's snapshot cleans messages of megabytes, and splitting one into its
 * lines would cost as much as serialising it.
 */
function isStatusOnly(text: string): boolean {
  for (let start = 0, end = 0; end >= 0; start = end + 1) {
    end = text.indexOf("\n", start);
    if (!isStatusLine(text.slice(start, end < 0 ? undefined : end))) return false;
  }
  return true;
}

/**
 * An agent message as the chat keeps it: without the lines that only showed
 * Goose at work and the ^C echoed before its answer to a cancel, every other
 * line as it was; null when nothing but Goose's status is left. AgentAPI
 * makes messages of the screen as it was, so these reach the dashboard's
 * chat, the saved one and the task's snapshot.
 */
export function withoutStatus(text: string): string | null {
  const cleaned = text.replace(PASSING_LINES, "").replace(ECHOED_CTRL_C, "");
  if (isStatusOnly(cleaned)) return null;
  // AgentAPI trims blank lines from a message's ends; a removed line must not leave one.
  return cleaned === text ? text : cleaned.replace(/^\s*\n/, "").trimEnd();
}

/** An extension Goose went on without, and why it did not start. */
export interface FailedExtension {
  name: string;
  reason: string;
}

// Goose says on its screen that an extension did not start and goes on
// without it: "Warning: Failed to start extension 'NAME' (REASON), continuing
// without it" before its banner (session/builder.rs), "  ⚠ Failed to start
// extension 'NAME' (REASON), continuing without it" once extensions load in
// the background (Goose 1.5x, show_extension_failures in session/output.rs).
const FAILED_START = /^\s*(?:Warning:|⚠) Failed to start extension '/u;
const FAILED_EXTENSION = /^\s*(?:Warning:|⚠) Failed to start extension '(.*?)' \((.*?)\), continuing without it/u;

/**
 * The extensions Goose's screen says it went on without. The line is longer
 * than the 80 columns of AgentAPI's terminal for most reasons, so it is read
 * with the rows below it joined on: its end is the first ", continuing
 * without it" there.
 */
export function failedExtensions(shown: string): FailedExtension[] {
  const rows = shown.split("\n");
  return rows.flatMap((row, at) => {
    const found = FAILED_START.test(row) && FAILED_EXTENSION.exec(rows.slice(at).join(""));
    return found ? [{ name: found[1] as string, reason: (found[2] as string).replace(/\s+/g, " ") }] : [];
  });
}

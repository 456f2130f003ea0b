import { readScreen, typeRaw } from "../agentapi/terminal.js";
import { ENTER_INPUT, firstTurn } from "../goose/screen.js";
import { log } from "../lib/log.js";
import { pollUntil } from "../lib/poll.js";
import type { LifecycleLock } from "../lifecycle/lock.js";

/**
 * How long a start waits for Goose to answer the turn it was launched with
 * (the task prompt, or the continuation of an interrupted turn) before it
 * says Goose is ready. Long enough for a short prompt's answer; a prompt that
 * sets Goose to work for minutes must not hold the workspace's start for
 * that long.
 */
export const FIRST_TURN_WAIT_MS = 60_000;

// Goose's screen is looked at this often while it answers; each look costs
// AgentAPI and Goose a little CPU.
const LOOK_MS = 250;

/**
 * Waits, within FIRST_TURN_WAIT_MS, for Goose to answer the turn it was
 * launched with, so that the start reports Goose ready only when a chat
 * message reaches it. A message sent before that (AgentAPI says "stable"
 * throughout the turn) is left unsent in Goose's input line: Enter, under the
 * lifecycle lock so no stop is typing meanwhile, sends it as the user meant.
 * `halted` ends the wait early (AgentAPI gone, a stop counted, the
 * supervisor standing down); the caller looks at why.
 */
export async function awaitFirstTurn(opts: {
  port: number;
  /** The turn, as the log names it: "the task prompt", say. */
  turn: string;
  halted: () => Promise<boolean>;
  lock: () => Promise<LifecycleLock | null>;
}): Promise<void> {
  const answered = async () => {
    if (await opts.halted()) return "halted" as const;
    const shown = await readScreen(opts.port, 1000);
    if (typeof shown !== "string") return undefined;
    const now = firstTurn(shown);
    return now === "running" ? undefined : now;
  };
  const found = await pollUntil(answered, { timeoutMs: FIRST_TURN_WAIT_MS, intervalMs: LOOK_MS });
  if (!("value" in found)) {
    log(
      `Goose is still answering ${opts.turn} after ${FIRST_TURN_WAIT_MS / 1000} s; a chat message sent before it has answered waits unsent in Goose's input line`,
    );
    return;
  }
  if (found.value === "halted") return;
  if (found.value === "empty") return log(`Goose has answered ${opts.turn}`);
  const held = await opts.lock();
  if (held === null) return;
  try {
    if (await opts.halted()) return;
    const typed = await typeRaw(opts.port, ENTER_INPUT, 1000);
    log(
      typed.ok
        ? `Goose has answered ${opts.turn}; sent the chat message it had left unsent in its input line meanwhile`
        : typed.answered
          ? `Goose has answered ${opts.turn}, but sending the chat message left unsent in its input line failed (${typed.error})`
          : `Goose has answered ${opts.turn}; the Enter that sends the chat message left unsent in its input line got no answer (${typed.error}), so whether it arrived is not known`,
    );
  } finally {
    await held.release();
  }
}

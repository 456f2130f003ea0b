import type { ModelError } from "./session-records.js";

/**
 * The text a warm start sends when the resumed session's last visible message
 * is a user message Goose never answered, or when the first prompt's turn
 * ended in a model error. Goose merges consecutive user messages into one
 * before it calls the model (observed with Goose 1.46.1), leaving out the
 * messages meant for the user alone, as its error messages are
 * (fix_conversation in crates/goose-provider-types/src/conversation.rs,
 * aaif-goose/goose v1.47.0), so the model sees the unanswered request
 * followed by this line.
 */
export const CONTINUATION_TEXT =
  "The workspace restarted before you finished answering my last message. Please carry on with it from where you left off.";

/** The end of a Goose conversation, as far as the module needs it. */
export interface ConversationTail {
  visibleCount: number;
  lastVisibleRole: string | null;
  lastVisibleUserText: string | null;
  /** No assistant message, visible or hidden, came after the last visible one. */
  unanswered: boolean;
  /** The failed model call that ended the last turn, if one did. */
  modelError: ModelError | null;
}

export type TailProbe = { kind: "read"; tail: ConversationTail; source: string } | { kind: "unknown"; reason: string };

export type TurnDecision =
  | { action: "none"; reason: string }
  | { action: "continue"; reason: string }
  | { action: "wait"; reason: string };

/**
 * Whether a warm start carries on an interrupted turn. A turn counts as
 * interrupted when the last message the user can see is theirs and Goose
 * stored no assistant message after it: Goose stores the user's message when
 * Enter is pressed and the reply only when the turn ends (observed with Goose
 * 1.46.1). A reply the chat does not show (metadata userVisible false, as
 * Goose marks the messages it keeps for the model alone; MessageMetadata in
 * crates/goose/src/conversation/message.rs, aaif-goose/goose) still ends the
 * turn. It is
 * continued once: when the unanswered message is the module's own
 * continuation, that continuation was interrupted too, and sending it again
 * could loop for ever on a turn that always dies. A turn that ended in a
 * model error was not interrupted, and is decided apart (decideFailedTurn).
 */
export function decideInterruptedTurn(input: {
  enabled: boolean;
  /** This start has a first prompt (the task's, ai_prompt or GOOSE_TASK_PROMPT), which a new session gets as its first message. */
  firstPrompt: boolean;
  mode: "cold" | "warm";
  probe: TailProbe;
}): TurnDecision {
  const { enabled, mode, probe } = input;
  if (mode === "cold") return { action: "none", reason: "a new session has no interrupted turn" };
  if (probe.kind === "unknown")
    return {
      action: "none",
      reason: `could not read the end of the conversation (${probe.reason}); nothing is sent, and the session waits for input`,
    };
  const { tail } = probe;
  if (tail.modelError) return decideFailedTurn(tail.modelError, enabled, input.firstPrompt);
  if (tail.lastVisibleRole !== "user") {
    return {
      action: "none",
      reason: tail.visibleCount === 0 ? "the session holds no visible message" : "the last turn was answered",
    };
  }
  if (!tail.unanswered)
    return {
      action: "none",
      reason: "Goose stored a reply the chat does not show after the last visible message, so the turn was answered",
    };
  if (tail.lastVisibleUserText === CONTINUATION_TEXT) {
    return {
      action: "wait",
      reason:
        "the interrupted turn was already continued once and was interrupted again; it waits for input in the chat",
    };
  }
  if (!enabled)
    return {
      action: "wait",
      reason:
        "the last message was never answered, and continue_interrupted_turn is false: the task waits for input in the chat",
    };
  return {
    action: "continue",
    reason:
      "the last message was never answered (the workspace stopped during its turn); asking Goose to carry on with it",
  };
}

/**
 * A turn that ended in a model error (ModelError) is not answered, and Goose
 * will not take it up by itself. The session's first prompt is carried on
 * once: it is the task, and nothing else would ever send it again, since a
 * start delivers it only to a new session (writePromptFile). Goose leaves the
 * error out of what it sends the model, so the model sees the prompt followed
 * by the continuation, as after an interruption. A message typed in the chat
 * is left to whoever typed it: they saw the error there and can send it again
 * once its cause is fixed, or not. The session's first message counts as the
 * first prompt only when this start has one: a session begun without a prompt
 * got its first message from the chat. A supervisor's restart has none either
 * (it never delivers the prompt); it runs with the start's key and settings,
 * so the call would most likely fail again. A continuation that failed in
 * turn was already carried on once.
 */
function decideFailedTurn(failed: ModelError, enabled: boolean, firstPrompt: boolean): TurnDecision {
  const ended = `the last turn ended in a model error (${failed.kind})`;
  if (failed.userText === CONTINUATION_TEXT)
    return { action: "wait", reason: `${ended} on the module's continuation, already sent once; it waits for input` };
  if (!failed.firstMessage || !firstPrompt)
    return {
      action: "wait",
      reason: `${ended} on a message typed in the chat: left to whoever typed it; nothing is sent`,
    };
  if (!enabled)
    return {
      action: "wait",
      reason: `${ended} on the first prompt, and continue_interrupted_turn is false: it waits for input`,
    };
  return { action: "continue", reason: `${ended} on the first prompt; asking Goose to carry on with it, once` };
}

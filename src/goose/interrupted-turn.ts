/**
 * The text a warm start sends when the resumed session's last visible message
 * is a user message Goose never answered. Goose merges consecutive user
 * messages into one before it calls the model (observed with Goose 1.46.1), so
 * the model sees the unanswered request followed by this line.
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
 * could loop for ever on a turn that always dies.
 */
export function decideInterruptedTurn(input: {
  enabled: boolean;
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

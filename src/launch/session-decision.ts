import type { StateSummary } from "../agentapi/state-file.js";
import type { SessionProbe } from "../goose/session-records.js";
import { StepError } from "../lib/log.js";
import type { ChatAction, ChatOwner } from "../lifecycle/chat-file.js";

export interface StartDecision {
  mode: "cold" | "warm";
  reason: string;
  state: ChatAction;
  stateReason?: string;
}

/**
 * Cold or warm, and what to do with AgentAPI's saved chat so it never shows a
 * history the agent does not remember.
 *
 * Warm needs proof: `goose session --resume` exits 1 when the session is
 * missing, which would kill the agent and strand the task prompt. When the
 * probe cannot tell, cold is the choice that cannot lose the prompt, at a
 * start. A supervisor's restart has no prompt to protect, and a cold start
 * there would set the running conversation's chat aside, so it fails instead
 * (the supervisor retries, then gives up with this reason).
 *
 * A session with the name but no message yet is resumed when there is no
 * prompt to deliver: it holds nothing a new session would do better, and a
 * new one would leave another session of the same name at each restart
 * nobody typed in. With a prompt, it never reached that session, and the
 * prompt goes to a new one as always.
 */
export function decideSession(input: {
  continueSession: boolean;
  sessionName: string;
  probe: SessionProbe;
  state: StateSummary;
  /** A prompt would be sent to a new session (a task prompt or the template's). */
  prompt: boolean;
  owner?: ChatOwner | null;
  restart?: boolean;
}): StartDecision {
  const { continueSession, sessionName, probe, state, owner } = input;
  if (input.restart && probe.kind === "unknown")
    throw new StepError(
      `could not tell whether Goose still has session "${sessionName}" (${probe.reason}), so the restart did not start a new session in its place.`,
    );
  let mode: StartDecision["mode"];
  let reason: string;
  if (!continueSession) {
    mode = "cold";
    reason = "continue is false, so every start begins a new session";
  } else if (probe.kind === "found" && probe.messages > 0) {
    mode = "warm";
    reason = `Goose has session "${sessionName}" (${probe.id}) with ${probe.messages} message(s) [${probe.source}]`;
  } else if (probe.kind === "found" && !input.prompt) {
    mode = "warm";
    reason = `Goose has session "${sessionName}" (${probe.id}) with no message yet; resuming it rather than starting another session of that name [${probe.source}]`;
  } else if (probe.kind === "found") {
    mode = "cold";
    reason = `Goose has session "${sessionName}" (${probe.id}) but it holds no message, so the prompt never reached it [${probe.source}]`;
  } else if (probe.kind === "absent") {
    mode = "cold";
    reason = `Goose has no session named "${sessionName}" [${probe.source}]`;
  } else {
    mode = "cold";
    const safe = input.prompt ? "starting a new session, which cannot lose the prompt" : "starting a new session";
    reason = `could not tell whether Goose has session "${sessionName}" (${probe.reason}); ${safe}`;
  }

  if (state.kind === "missing") return { mode, reason, state: "none" };
  if (state.kind === "invalid") {
    return {
      mode,
      reason,
      state: "set-aside",
      stateReason: `the AgentAPI state file is unreadable by AgentAPI (${state.reason})`,
    };
  }
  // An empty session remembers no chat; a chat without a user message holds
  // nothing for it to remember (Goose's banner, nothing typed), so it stays.
  if (mode === "warm" && probe.kind === "found" && probe.messages === 0) {
    if (state.userMessages === 0) return { mode, reason, state: "keep" };
    return {
      mode,
      reason,
      state: "set-aside",
      stateReason: `the AgentAPI state file holds ${state.userMessages} user message(s), and Goose session "${sessionName}" (${probe.id}) holds none`,
    };
  }
  if (mode === "warm" && state.messages > 0 && owner && probe.kind === "found") {
    const otherName = owner.session_name !== sessionName;
    const otherId = owner.session_id !== null && owner.session_id !== probe.id;
    if (otherName || otherId) {
      const whose = otherName
        ? `Goose session "${owner.session_name}"`
        : `an earlier Goose session "${sessionName}" (${owner.session_id})`;
      return {
        mode,
        reason,
        state: "set-aside",
        stateReason: `the AgentAPI state file holds the chat of ${whose}, not of "${sessionName}" (${probe.id})`,
      };
    }
  }
  if (mode === "warm") return { mode, reason, state: "keep" };
  if (state.messages === 0) return { mode, reason, state: "none" };
  return {
    mode,
    reason,
    state: "set-aside",
    stateReason: `the AgentAPI state file holds ${state.messages} message(s) from a conversation this new Goose session will not remember`,
  };
}

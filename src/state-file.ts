export type StateSummary =
  | { kind: "missing" }
  | { kind: "invalid"; reason: string }
  | { kind: "valid"; messages: number; userMessages: number; initialPromptSent: boolean };

// Go's time.Time accepts RFC 3339 only (encoding/json calls time.Parse with
// time.RFC3339): https://pkg.go.dev/time#Time.UnmarshalJSON
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Why AgentAPI's decoder would reject one saved message, or null. A wrong JSON
 * type anywhere fails AgentAPI's whole load (lib/screentracker/
 * pty_conversation.go @ v0.12.1, loadStateLocked), and the next save then
 * overwrites the file; null fields decode to zero values and pass.
 */
function messageProblem(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return "is not an object";
  const m = value as { id?: unknown; message?: unknown; role?: unknown; time?: unknown };
  if (m.id !== undefined && m.id !== null && !Number.isInteger(m.id)) return "has an id that is not an integer";
  if (m.message !== undefined && m.message !== null && typeof m.message !== "string")
    return "has a message that is not a string";
  if (m.role !== undefined && m.role !== null && typeof m.role !== "string") return "has a role that is not a string";
  if (m.time !== undefined && m.time !== null && !(typeof m.time === "string" && RFC3339.test(m.time)))
    return "has a time that is not an RFC 3339 timestamp";
  return null;
}

/** Reads an AgentAPI state file the way AgentAPI would accept it (version 1, a messages array). */
export function summarizeState(text: string | null): StateSummary {
  if (text === null) return { kind: "missing" };
  if (text.trim() === "") return { kind: "invalid", reason: "the file is empty" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { kind: "invalid", reason: `not JSON (${(error as Error).message})` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return { kind: "invalid", reason: "not a JSON object" };
  const state = parsed as {
    version?: unknown;
    messages?: unknown;
    initial_prompt?: unknown;
    initial_prompt_sent?: unknown;
  };
  if (state.version !== 1)
    return {
      kind: "invalid",
      reason: `unsupported version ${JSON.stringify(state.version ?? null)} (AgentAPI reads version 1)`,
    };
  if (!Array.isArray(state.messages)) return { kind: "invalid", reason: "no messages array" };
  const messages = state.messages as unknown[];
  const bad = messages.findIndex((m) => messageProblem(m) !== null);
  if (bad !== -1)
    return {
      kind: "invalid",
      reason: `message ${bad} ${messageProblem(messages[bad])} (AgentAPI would refuse the whole file)`,
    };
  if (state.initial_prompt !== undefined && state.initial_prompt !== null && typeof state.initial_prompt !== "string")
    return { kind: "invalid", reason: "initial_prompt is not a string" };
  if (
    state.initial_prompt_sent !== undefined &&
    state.initial_prompt_sent !== null &&
    typeof state.initial_prompt_sent !== "boolean"
  )
    return { kind: "invalid", reason: "initial_prompt_sent is not a boolean" };
  return {
    kind: "valid",
    messages: messages.length,
    userMessages: messages.filter((m) => (m as { role?: unknown } | null)?.role === "user").length,
    initialPromptSent: state.initial_prompt_sent === true,
  };
}

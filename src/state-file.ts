export type StateSummary =
  | { kind: "missing" }
  | { kind: "invalid"; reason: string }
  | { kind: "valid"; messages: number; userMessages: number; initialPromptSent: boolean };

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
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { kind: "invalid", reason: "not a JSON object" };
  const state = parsed as { version?: unknown; messages?: unknown; initial_prompt_sent?: unknown };
  if (state.version !== 1) return { kind: "invalid", reason: `unsupported version ${JSON.stringify(state.version ?? null)} (AgentAPI reads version 1)` };
  if (!Array.isArray(state.messages)) return { kind: "invalid", reason: "no messages array" };
  const messages = state.messages as Array<{ role?: unknown }>;
  return {
    kind: "valid",
    messages: messages.length,
    userMessages: messages.filter((m) => m?.role === "user").length,
    initialPromptSent: state.initial_prompt_sent === true,
  };
}

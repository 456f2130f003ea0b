import { isStatusOnly } from "./screen.js";

interface SavedMessage {
  id?: unknown;
  message?: unknown;
  role?: unknown;
}

/**
 * Removes status-only agent messages from an AgentAPI state file's text.
 * Returns null when there is nothing to remove, so the caller writes nothing.
 * Ids are renumbered only when they were the positions (as AgentAPI numbers
 * them), so the next message AgentAPI adds cannot collide with a kept one.
 */
export function removeStatusOnlyMessages(text: string): { text: string; removed: number } | null {
  let state: { messages?: unknown };
  try {
    state = JSON.parse(text) as { messages?: unknown };
  } catch {
    return null;
  }
  if (!state || typeof state !== "object" || !Array.isArray(state.messages)) return null;
  const messages = state.messages as SavedMessage[];
  const kept = messages.filter(
    (m) => !(m && m.role === "agent" && typeof m.message === "string" && isStatusOnly(m.message)),
  );
  if (kept.length === messages.length) return null;
  const positional = messages.every((m, index) => m?.id === index);
  const renumbered = positional ? kept.map((m, index) => ({ ...m, id: index })) : kept;
  return { text: `${JSON.stringify({ ...state, messages: renumbered })}\n`, removed: messages.length - kept.length };
}

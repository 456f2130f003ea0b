/**
 * Goose's status lines, as a real Goose 1.46.1 drew them under AgentAPI (the
 * spinner while a turn runs or extensions load, the steer hint, the context
 * bar, the idle prompt and its placeholder). AgentAPI saves whatever the
 * screen showed as the last agent message, so a stop during a turn saved a
 * message made of nothing but these lines, and restored it on every start.
 */
const STATUS_LINES: RegExp[] = [
  /^[◐◓◑◒]\s/u,
  /^>\s+\[Enter steer · Tab queue · Ctrl\+C stop\]$/u,
  /^╌+\s+\d+%\s+\S+$/u,
  /^⏱\s+[0-9.]+m?s$/u,
  /^>(\s+Enter to send\b.*)?$/u,
  /^Press Ctrl\+C again to exit, or type new instructions to continue$/u,
];

function isStatusLine(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === "" || STATUS_LINES.some((pattern) => pattern.test(trimmed));
}

/** True for an agent message that shows no words of Goose's, only its status. */
export function isStatusOnly(text: string): boolean {
  return text.split("\n").every(isStatusLine);
}

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

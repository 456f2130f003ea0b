export interface ChatMessage {
  id: number;
  content: string;
  role: string;
  time: string;
}

export interface SnapshotOptions {
  maxMessages: number;
  maxBytes: number;
}

export const SNAPSHOT_LIMITS: SnapshotOptions = { maxMessages: 10, maxBytes: 64 * 1024 };
export const TRUNCATION_MARKER = "[...content truncated, showing the end of the message...]\n\n";

function bytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

/**
 * The payload Coder stores for a paused task: the last messages, fitted into
 * the size limit by dropping the oldest, then keeping the tail of the one
 * message left behind a truncation marker.
 */
export function buildSnapshot(messages: ChatMessage[], options: SnapshotOptions = SNAPSHOT_LIMITS): { payload: string; kept: number; truncated: boolean } {
  let kept = messages.slice(-options.maxMessages);
  while (kept.length > 1 && bytes({ messages: kept }) > options.maxBytes) kept = kept.slice(1);
  if (bytes({ messages: kept }) <= options.maxBytes) return { payload: JSON.stringify({ messages: kept }), kept: kept.length, truncated: false };

  const last = kept[0] as ChatMessage;
  const points = Array.from(last.content);
  const fitted = (count: number) => ({ messages: [{ ...last, content: TRUNCATION_MARKER + points.slice(points.length - count).join("") }] });
  // JSON escaping makes a code point cost 1 to 12 bytes, so search for the
  // longest tail that fits rather than estimate it.
  let low = 0;
  let high = points.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (bytes(fitted(mid)) <= options.maxBytes) low = mid;
    else high = mid - 1;
  }
  return { payload: JSON.stringify(fitted(low)), kept: 1, truncated: true };
}

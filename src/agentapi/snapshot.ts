export interface ChatMessage {
  id: number;
  content: string;
  role: string;
  time: string;
}

export interface SnapshotOptions {
  maxMessages: number;
  maxBytes: number;
  /** What the chat shows of an agent message's text; null leaves the message out. */
  agentText?: (text: string) => string | null;
}

export const SNAPSHOT_LIMITS: SnapshotOptions = { maxMessages: 10, maxBytes: 64 * 1024 };
export const TRUNCATION_MARKER = "[...content truncated, showing the end of the message...]\n\n";

function bytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

/**
 * UTF-8 bytes JSON.stringify spends on one UTF-16 code unit or surrogate
 * pair inside a string: '"' and '\' and the control characters with a short
 * escape take 2, other control characters and lone surrogates a six-byte
 * \uXXXX escape, everything else its UTF-8 length (ECMA-262,
 * QuoteJSONString). A pair is charged on its low half.
 */
function escapedCost(code: number, pairedLow: boolean): number {
  if (pairedLow) return 4;
  if (
    code === 0x22 ||
    code === 0x5c ||
    code === 0x08 ||
    code === 0x09 ||
    code === 0x0a ||
    code === 0x0c ||
    code === 0x0d
  )
    return 2;
  if (code < 0x20) return 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 6;
  return 3;
}

/**
 * Where the longest tail of `text` starts whose JSON-escaped bytes fit in
 * `budget`, walking once from the end. It never starts inside a surrogate
 * pair.
 */
export function tailStart(text: string, budget: number): number {
  let used = 0;
  let i = text.length;
  while (i > 0) {
    const code = text.charCodeAt(i - 1);
    const pair = code >= 0xdc00 && code <= 0xdfff && i >= 2 && (text.charCodeAt(i - 2) & 0xfc00) === 0xd800;
    const cost = escapedCost(code, pair);
    if (used + cost > budget) break;
    used += cost;
    i -= pair ? 2 : 1;
  }
  return i;
}

/**
 * A message's size in the payload, in bytes; for a message whose text alone
 * cannot fit in `limit`, a lower bound over `limit` instead (every UTF-16 unit
 * of a string costs at least one byte of JSON), so a huge message is never
 * serialised whole.
 */
function sizeOrBound(message: ChatMessage, limit: number): number {
  return typeof message.content === "string" && message.content.length > limit
    ? message.content.length
    : bytes(message);
}

/**
 * The last messages as the chat shows them (options.agentText), walking from
 * the end, so a long chat costs only the messages kept.
 */
function lastShown(messages: ChatMessage[], options: SnapshotOptions): ChatMessage[] {
  const { agentText } = options;
  if (!agentText) return messages.slice(-options.maxMessages);
  const shown: ChatMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && shown.length < options.maxMessages; i--) {
    const m = messages[i] as ChatMessage;
    const content = m.role === "agent" && typeof m.content === "string" ? agentText(m.content) : m.content;
    if (content !== null) shown.unshift(content === m.content ? m : { ...m, content });
  }
  return shown;
}

/**
 * The payload Coder stores for a paused task: the last messages as the chat
 * shows them (lastShown), fitted into the size limit by dropping the oldest,
 * then keeping the tail of the one message left behind a truncation marker. A
 * message that can fit is serialised once; one that cannot is only measured
 * from its end, in one pass over the tail that fits (the escaped size of a
 * string is the sum over its characters), so serialising does not grow with
 * the message.
 */
export function buildSnapshot(
  messages: ChatMessage[],
  options: SnapshotOptions = SNAPSHOT_LIMITS,
): { payload: string; kept: number; truncated: boolean } {
  let kept = lastShown(messages, options);
  // {"messages":[a,b,...]}: 15 bytes of frame, one comma between messages.
  // A bound in `sizes` keeps `total` over the limit for as long as its message
  // is kept, and leaves the exact sum of the others once it is dropped.
  const sizes = kept.map((m) => sizeOrBound(m, options.maxBytes));
  let total = 15 + sizes.reduce((sum, size) => sum + size, 0) + Math.max(0, kept.length - 1);
  let first = 0;
  while (kept.length - first > 1 && total > options.maxBytes) total -= (sizes[first++] as number) + 1;
  kept = kept.slice(first);
  if (total <= options.maxBytes)
    return { payload: JSON.stringify({ messages: kept }), kept: kept.length, truncated: false };

  const last = kept[0] as ChatMessage;
  const withContent = (content: string) => JSON.stringify({ messages: [{ ...last, content }] });
  const budget = options.maxBytes - Buffer.byteLength(withContent(TRUNCATION_MARKER), "utf8");
  const tail = budget > 0 ? last.content.slice(tailStart(last.content, budget)) : "";
  const payload = withContent(TRUNCATION_MARKER + tail);
  if (budget >= 0 && Buffer.byteLength(payload, "utf8") > options.maxBytes) {
    throw new Error(
      `internal: the snapshot measured ${Buffer.byteLength(payload, "utf8")} bytes, over the ${options.maxBytes} it was fitted to`,
    );
  }
  return { payload, kept: 1, truncated: true };
}

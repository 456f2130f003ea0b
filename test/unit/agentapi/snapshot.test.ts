import { describe, expect, it } from "vitest";
import {
  buildSnapshot,
  type ChatMessage,
  SNAPSHOT_LIMITS,
  TRUNCATION_MARKER,
  tailStart,
} from "../../../src/agentapi/snapshot.js";
import { withoutStatus } from "../../../src/goose/screen.js";

const message = (id: number, content: string): ChatMessage => {
  return { id, content, role: id % 2 ? "user" : "agent", time: "2026-11-22T10:00:00Z" };
};
const size = (payload: string) => Buffer.byteLength(payload, "utf8");
const LIMIT = 64 * 1024;
const ids = (payload: string) => JSON.parse(payload).messages.map((m: ChatMessage) => m.id);

describe("buildSnapshot", () => {
  it("keeps a short conversation whole", () => {
    const messages = [message(0, "hi"), message(1, "fix it")];
    expect(buildSnapshot(messages)).toMatchObject({ payload: JSON.stringify({ messages }), truncated: false });
    expect(JSON.parse(buildSnapshot([]).payload)).toEqual({ messages: [] });
  });

  it("keeps only the last 10 messages", () => {
    const messages = Array.from({ length: 25 }, (_, i) => message(i, `m${i}`));
    expect(ids(buildSnapshot(messages).payload)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
  });

  it("drops the oldest messages to fit 64 KiB", () => {
    const snapshot = buildSnapshot(Array.from({ length: 10 }, (_, i) => message(i, "x".repeat(10_000))));
    expect(size(snapshot.payload)).toBeLessThanOrEqual(LIMIT);
    expect(ids(snapshot.payload)).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it("fits content that JSON escaping inflates, without splitting characters", () => {
    const nasty = '\u0001"\\\n😀'.repeat(30_000);
    const snapshot = buildSnapshot([message(0, nasty)]);
    const content: string = JSON.parse(snapshot.payload).messages[0].content;
    expect(size(snapshot.payload)).toBeLessThanOrEqual(LIMIT);
    expect(content.endsWith("😀")).toBe(true);
    expect(content).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});

// What the stop posts (stop/task-snapshot.ts): agent messages as goose/screen.ts cleans them.
describe("buildSnapshot shows the chat without Goose's status lines", () => {
  const snapshot = (messages: ChatMessage[]) =>
    buildSnapshot(messages, { ...SNAPSHOT_LIMITS, agentText: withoutStatus }).payload;
  // Lines as upstream Goose 1.47.0 draws them under AgentAPI.
  const SPINNER = "◐  Sampling syntax streams...  (Ctrl+C to interrupt)";
  const said = (id: number, role: string, content: string): ChatMessage => ({ id, role, content, time: "t" });
  const contents = (payload: string) => JSON.parse(payload).messages.map((m: ChatMessage) => `${m.id} ${m.content}`);

  it("takes the spinner and the echoed ^C out of agent messages, and leaves out those with nothing else", () => {
    const messages = [
      said(0, "agent", "banner"),
      said(1, "user", `do it\n${SPINNER}`),
      said(2, "agent", `Reading ci.yml\n${SPINNER}\n^CYes — what would you like me to do?`),
      said(3, "user", "go on"),
      said(4, "agent", `${SPINNER}\n  ✓ extensions ready`),
    ];
    expect(contents(snapshot(messages))).toEqual([
      "0 banner",
      `1 do it\n${SPINNER}`,
      "2 Reading ci.yml\nYes — what would you like me to do?",
      "3 go on",
    ]);
  });

  it("keeps the last 10 messages the chat shows, past the ones left out", () => {
    const messages = Array.from({ length: 14 }, (_, i) => said(i, "agent", i % 2 ? SPINNER : `m${i}`));
    expect(ids(snapshot(messages))).toEqual([0, 2, 4, 6, 8, 10, 12]);
    const more = Array.from({ length: 30 }, (_, i) => said(i, "agent", i % 2 ? SPINNER : `m${i}`));
    expect(ids(snapshot(more))).toEqual([10, 12, 14, 16, 18, 20, 22, 24, 26, 28]);
  });
});

/** The earlier implementation (binary search over code points), kept as the oracle for the output contract. */
function referenceSnapshot(messages: ChatMessage[], maxMessages: number, maxBytes: number): string {
  const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), "utf8");
  let kept = messages.slice(-maxMessages);
  while (kept.length > 1 && bytes({ messages: kept }) > maxBytes) kept = kept.slice(1);
  if (bytes({ messages: kept }) <= maxBytes) return JSON.stringify({ messages: kept });
  const last = kept[0] as ChatMessage;
  const points = Array.from(last.content);
  const fitted = (count: number) => ({
    messages: [{ ...last, content: TRUNCATION_MARKER + points.slice(points.length - count).join("") }],
  });
  let low = 0;
  let high = points.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (bytes(fitted(mid)) <= maxBytes) low = mid;
    else high = mid - 1;
  }
  return JSON.stringify(fitted(low));
}

const ESCAPED_OR_WIDE = ['"', "\\", "\n", "\t", "\u0000", "\u001f", "\u007f", "é", "€", "\u2028", "😀"];
const HOSTILE = [...ESCAPED_OR_WIDE, "\ud800", "\udc00", "a", "</script>", "\r\n"];

/** A deterministic pseudo-random string of hostile pieces, including lone and reversed surrogates. */
function hostileText(seed: number, length: number): string {
  let x = seed;
  let out = "";
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out += HOSTILE[x % HOSTILE.length];
  }
  return out;
}

const escaped = (text: string) => Buffer.byteLength(JSON.stringify(text), "utf8") - 2;

describe("tailStart", () => {
  it.each([
    ["abc", 2, 1],
    ["abc", 0, 3],
    ["abc", 99, 0],
    ['a"', 1, 2],
    ['a"', 2, 1],
    ["a\u0001", 5, 2],
    ["a\u0001", 6, 1],
    ["aé", 2, 1],
    ["a€", 3, 1],
    ["a\u2028", 3, 1],
    ["a😀", 3, 3],
    ["a😀", 4, 1],
    ["a\ud800", 6, 1],
    ["a\udc00", 5, 2],
    ["\ud800\ud800\udc00", 4, 1],
    ["\udc00\ud800", 6, 1],
  ])("%j with budget %i starts at %i", (text, budget, start) => {
    expect(tailStart(text, budget)).toBe(start);
  });

  it("finds the longest tail that fits, for hostile text and any budget", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const text = hostileText(seed, 300);
      for (const budget of [0, 1, 5, 6, 7, 50, 333, 10_000]) {
        const start = tailStart(text, budget);
        expect(escaped(text.slice(start))).toBeLessThanOrEqual(budget);
        if (start > 0) {
          const step = start >= 2 && /[\ud800-\udbff][\udc00-\udfff]/.test(text.slice(start - 2, start)) ? 2 : 1;
          expect(escaped(text.slice(start - step))).toBeGreaterThan(budget);
        }
        // Never between the two halves of a pair.
        expect(start > 0 && /[\ud800-\udbff][\udc00-\udfff]/.test(text.slice(start - 1, start + 1))).toBe(false);
      }
    }
  });
});

describe("buildSnapshot limits", () => {
  const snap = (messages: ChatMessage[], maxBytes: number) =>
    buildSnapshot(messages, { maxMessages: 10, maxBytes }).payload;
  it("never exceeds the limit for hostile content, and matches the earlier output exactly", () => {
    for (let seed = 1; seed <= 30; seed++) {
      for (const maxBytes of [400, 1000, 4096]) {
        const messages = [message(0, hostileText(seed, 50)), message(1, hostileText(seed + 1000, 2000))];
        const payload = snap(messages, maxBytes);
        expect(size(payload)).toBeLessThanOrEqual(maxBytes);
        expect(payload).toBe(referenceSnapshot(messages, 10, maxBytes));
      }
    }
  });

  it("matches the earlier output when dropping whole messages, and with a too-big message anywhere", () => {
    for (const maxBytes of [100, 150, 300, 400, 1000, 4096, 10_000]) {
      const messages = Array.from({ length: 12 }, (_, i) => message(i, hostileText(i + 7, 10)));
      expect(snap(messages, maxBytes)).toBe(referenceSnapshot(messages, 10, maxBytes));
      for (const at of [0, 2, 5]) {
        const six = Array.from({ length: 6 }, (_, i) =>
          message(i, i === at ? hostileText(i + 1, maxBytes * 2) : hostileText(i + 50, 20)),
        );
        expect(snap(six, maxBytes)).toBe(referenceSnapshot(six, 10, maxBytes));
      }
    }
  });

  it("returns the marker alone, as before, when even that does not fit", () => {
    const messages = [message(0, "x".repeat(1000))];
    expect(JSON.parse(snap(messages, 50)).messages[0].content).toBe(TRUNCATION_MARKER);
    expect(snap(messages, 50)).toBe(referenceSnapshot(messages, 10, 50));
  });

  it("handles a 5-million-character message", () => {
    const huge = `${'"\\\u0001é😀'.repeat(1_000_000)}THE END`;
    const snapshot = buildSnapshot([message(0, "before"), message(1, huge)]);
    const content: string = JSON.parse(snapshot.payload).messages[0].content;
    expect(snapshot).toMatchObject({ kept: 1, truncated: true });
    expect(size(snapshot.payload)).toBeLessThanOrEqual(LIMIT);
    expect(size(snapshot.payload)).toBeGreaterThan(LIMIT - 12);
    expect(content.startsWith(TRUNCATION_MARKER)).toBe(true);
    expect(huge.endsWith(content.slice(TRUNCATION_MARKER.length))).toBe(true);
    expect(content.endsWith("😀THE END")).toBe(true);
  });
});

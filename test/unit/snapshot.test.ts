import { describe, expect, it } from "vitest";
import { buildSnapshot, TRUNCATION_MARKER, type ChatMessage } from "../../src/snapshot.js";

const message = (id: number, content: string): ChatMessage => ({ id, content, role: id % 2 ? "user" : "agent", time: "2026-11-22T10:00:00Z" });
const size = (payload: string) => Buffer.byteLength(payload, "utf8");

describe("buildSnapshot", () => {
  it("keeps a short conversation whole", () => {
    const messages = [message(0, "hi"), message(1, "fix it")];
    const snapshot = buildSnapshot(messages);
    expect(JSON.parse(snapshot.payload)).toEqual({ messages });
    expect(snapshot.truncated).toBe(false);
  });

  it("keeps only the last 10 messages", () => {
    const messages = Array.from({ length: 25 }, (_, i) => message(i, `m${i}`));
    const parsed = JSON.parse(buildSnapshot(messages).payload);
    expect(parsed.messages.map((m: ChatMessage) => m.id)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
  });

  it("drops the oldest messages to fit 64 KiB", () => {
    const messages = Array.from({ length: 10 }, (_, i) => message(i, "x".repeat(10_000)));
    const snapshot = buildSnapshot(messages);
    const parsed = JSON.parse(snapshot.payload);
    expect(size(snapshot.payload)).toBeLessThanOrEqual(64 * 1024);
    expect(parsed.messages.at(-1).id).toBe(9);
    expect(parsed.messages.length).toBe(6);
  });

  it("keeps the tail of one huge message behind a marker", () => {
    const huge = `${"a".repeat(200_000)}THE END`;
    const snapshot = buildSnapshot([message(0, "before"), message(1, huge)]);
    const parsed = JSON.parse(snapshot.payload);
    expect(size(snapshot.payload)).toBeLessThanOrEqual(64 * 1024);
    expect(snapshot.truncated).toBe(true);
    expect(parsed.messages).toHaveLength(1);
    expect(parsed.messages[0].content.startsWith(TRUNCATION_MARKER)).toBe(true);
    expect(parsed.messages[0].content.endsWith("THE END")).toBe(true);
    expect(size(snapshot.payload)).toBeGreaterThan(60 * 1024);
  });

  it("fits content that JSON escaping inflates, without splitting characters", () => {
    const nasty = "\u0001\"\\\n😀".repeat(30_000);
    const snapshot = buildSnapshot([message(0, nasty)]);
    const content: string = JSON.parse(snapshot.payload).messages[0].content;
    expect(size(snapshot.payload)).toBeLessThanOrEqual(64 * 1024);
    expect(content.endsWith("😀")).toBe(true);
    expect(content).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it("handles an empty conversation", () => {
    expect(JSON.parse(buildSnapshot([]).payload)).toEqual({ messages: [] });
  });
});

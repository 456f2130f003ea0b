import { describe, expect, it } from "vitest";
import { giveUpOf } from "../../../src/supervisor/process.js";

describe("giveUpOf: the supervisor's last word, for the next start", () => {
  const launched = "2026-01-01T00:00:05.300Z";
  it.each<[string, string, string | null, string | null]>([
    ["after the last launch", "2026-01-01T00:01:00Z\nthe wrapper changed\n", launched, "the wrapper changed"],
    [
      "in the launch's second (the file's time is to the second)",
      "2026-01-01T00:00:05Z\nit died\n",
      launched,
      "it died",
    ],
    ["before the last launch: an earlier run's", "2026-01-01T00:00:04Z\nold\n", launched, null],
    ["with no launch record to hold it against", "2026-01-01T00:00:04Z\nold\n", null, "old"],
    ["a reason of several lines, on one", "2026-01-01T00:01:00Z\na\nb\u001b[31m\n", launched, "a b [31m"],
    ["no time", "gave up\nreason\n", launched, null],
    ["no reason", "2026-01-01T00:01:00Z\n\n", launched, null],
    ["nothing", "", launched, null],
  ])("%s", (_, text, launchedAt, expected) => {
    expect(giveUpOf(text, launchedAt)).toBe(expected);
  });
});

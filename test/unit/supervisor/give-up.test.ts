import { describe, expect, it } from "vitest";
import { giveUpIn } from "../../../src/supervisor/process.js";

describe("giveUpIn: the supervisor's last word, for the next start", () => {
  it.each([
    ["2026-01-01T00:00:00Z goose-module: warning: gave up: the wrapper changed\n", "the wrapper changed"],
    ["2026-01-01T00:00:00Z goose-module: gave up: the runtime changed\n\n", "the runtime changed"],
    ["goose-module: gave up: old\n2026-01-01T00:00:00Z goose-module: watching AgentAPI (PID 5)\n", null],
    ["", null],
  ])("%j", (text, expected) => {
    expect(giveUpIn(text)).toBe(expected);
  });
});

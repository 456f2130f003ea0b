import { describe, expect, it } from "vitest";
import { CONTINUATION_TEXT, decideInterruptedTurn, type TailProbe } from "../../../src/goose/interrupted-turn.js";

describe("decideInterruptedTurn", () => {
  const read = (
    lastVisibleRole: string | null,
    lastVisibleUserText: string | null = "fix it",
    visibleCount = 3,
    unanswered = lastVisibleRole === "user",
  ): TailProbe => ({
    kind: "read",
    source: "test",
    tail: { visibleCount, lastVisibleRole, lastVisibleUserText, unanswered },
  });
  it.each([
    // enabled, mode, probe, action
    [true, "cold", read("user"), "none"],
    [true, "warm", read("assistant"), "none"],
    [true, "warm", read(null, null, 0), "none"],
    [true, "warm", { kind: "unknown", reason: "export failed" } as TailProbe, "none"],
    [true, "warm", read("user"), "continue"],
    [false, "warm", read("user"), "wait"],
    [true, "warm", read("user", CONTINUATION_TEXT), "wait"],
    [false, "warm", read("user", CONTINUATION_TEXT), "wait"],
    // A hidden assistant message after the last visible user message: Goose answered.
    [true, "warm", read("user", "fix it", 3, false), "none"],
    [false, "warm", read("user", "fix it", 3, false), "none"],
    [true, "warm", read("user", CONTINUATION_TEXT, 3, false), "none"],
  ] as const)("enabled=%s %s %o -> %s", (enabled, mode, probe, action) => {
    expect(decideInterruptedTurn({ enabled, mode, probe }).action).toBe(action);
  });

  it("says the task waits for input when continuing is off", () => {
    const { reason } = decideInterruptedTurn({ enabled: false, mode: "warm", probe: read("user") });
    expect(reason).toContain("waits for input");
  });
});

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
    tail: { visibleCount, lastVisibleRole, lastVisibleUserText, unanswered, modelError: null },
  });
  /** A conversation whose last turn ended in a failed model call, Goose's error message its last visible one. */
  const failed = (kind: string, userText: string, firstMessage: boolean): TailProbe => ({
    kind: "read",
    source: "test",
    tail: {
      visibleCount: firstMessage ? 2 : 4,
      lastVisibleRole: "assistant",
      lastVisibleUserText: null,
      unanswered: false,
      modelError: { kind, userText, firstMessage },
    },
  });
  const prompt = failed("authentication", "Fix the login test.", true);
  const typed = failed("authentication", "Now the docs.", false);
  it.each([
    // enabled, firstPrompt, mode, probe, action
    [true, true, "cold", read("user"), "none"],
    [true, true, "warm", read("assistant"), "none"],
    [true, true, "warm", read(null, null, 0), "none"],
    [true, true, "warm", { kind: "unknown", reason: "export failed" } as TailProbe, "none"],
    [true, true, "warm", read("user"), "continue"],
    [true, false, "warm", read("user"), "continue"],
    [false, true, "warm", read("user"), "wait"],
    [true, true, "warm", read("user", CONTINUATION_TEXT), "wait"],
    [false, true, "warm", read("user", CONTINUATION_TEXT), "wait"],
    // A hidden assistant message after the last visible user message: Goose answered.
    [true, true, "warm", read("user", "fix it", 3, false), "none"],
    [false, true, "warm", read("user", "fix it", 3, false), "none"],
    [true, true, "warm", read("user", CONTINUATION_TEXT, 3, false), "none"],
    // The first prompt's turn ended in a model error: carried on once, when carrying on is on.
    [true, true, "warm", prompt, "continue"],
    [false, true, "warm", prompt, "wait"],
    [true, true, "cold", prompt, "none"],
    // The session's first message, but this start has no first prompt: someone typed it.
    [true, false, "warm", prompt, "wait"],
    // A typed message's model error is left to whoever typed it.
    [true, true, "warm", typed, "wait"],
    [true, true, "warm", failed("other", CONTINUATION_TEXT, false), "wait"],
  ] as const)("enabled=%s firstPrompt=%s %s %o -> %s", (enabled, firstPrompt, mode, probe, action) => {
    expect(decideInterruptedTurn({ enabled, firstPrompt, mode, probe }).action).toBe(action);
  });

  it.each([
    ["continuing is off", false, true, read("user"), /waits for input/],
    [
      "the first prompt's turn failed",
      true,
      true,
      prompt,
      /^the last turn ended in a model error \(authentication\) on the first prompt; asking Goose to carry on with it, once$/,
    ],
    [
      "the first prompt's turn failed, continuing is off",
      false,
      true,
      prompt,
      /^the last turn ended in a model error \(authentication\) .*continue_interrupted_turn is false/,
    ],
    [
      "a typed message failed",
      true,
      true,
      failed("creditsExhausted", "Now the docs.", false),
      /^the last turn ended in a model error \(creditsExhausted\) on a message typed in the chat.*left to .*nothing is sent/,
    ],
    [
      "the first message failed, with no first prompt at this start: someone typed it",
      true,
      false,
      prompt,
      /^the last turn ended in a model error \(authentication\) on a message typed in the chat.*nothing is sent/,
    ],
    [
      "the continuation failed",
      true,
      true,
      failed("authentication", CONTINUATION_TEXT, false),
      /^the last turn ended in a model error \(authentication\) on the module's continuation, already sent once/,
    ],
  ] as const)("says why when %s", (_name, enabled, firstPrompt, probe, reason) => {
    expect(decideInterruptedTurn({ enabled, firstPrompt, mode: "warm", probe }).reason).toMatch(reason);
  });
});

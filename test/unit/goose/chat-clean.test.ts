import { describe, expect, it } from "vitest";
import { removeStatusOnlyMessages } from "../../../src/goose/chat-clean.js";
import { CONTINUATION_TEXT, decideInterruptedTurn, type TailProbe } from "../../../src/goose/interrupted-turn.js";

// Lines as a real Goose 1.46.1 drew them under AgentAPI.
const SPINNER = "◐  Sampling syntax streams...  (Ctrl+C to interrupt)";
const STEER = ">   [Enter steer · Tab queue · Ctrl+C stop]";

describe("removeStatusOnlyMessages", () => {
  const at = "2026-11-22T10:00:00.000000001Z";
  const [a, u] = [(m: string) => ["agent", m], (m: string) => ["user", m]];
  const state = (...messages: string[][]) =>
    JSON.stringify({
      version: 1,
      messages: messages.map(([role, message], id) => ({ id, message, role, time: at })),
      initial_prompt: "p",
      initial_prompt_sent: true,
    });

  it("removes a trailing spinner-only agent message and keeps everything else as it was", () => {
    const text = state(a("banner"), u("do it"), a(`${SPINNER}\n${STEER}`));
    const cleaned = removeStatusOnlyMessages(text);
    expect(cleaned?.removed).toBe(1);
    const before = JSON.parse(text);
    expect(JSON.parse(cleaned!.text)).toEqual({ ...before, messages: before.messages.slice(0, 2) });
  });

  it("renumbers positional ids so the next message cannot collide", () => {
    const cleaned = removeStatusOnlyMessages(state(a("banner"), a(SPINNER), u("again"), a("reply")));
    const ids = JSON.parse(cleaned!.text).messages.map((m: { id: number; message: string }) => `${m.id} ${m.message}`);
    expect(ids).toEqual(["0 banner", "1 again", "2 reply"]);
  });

  it.each([
    ["user messages, even ones that look like a spinner", state(u(SPINNER), a("reply"))],
    ["a clean chat", state(a("banner"), u("hi"), a("reply"))],
    ["a file that is not JSON", "{not json"],
    ["a file that is not a state file", "[]"],
  ])("never removes (returns null, writes nothing) from %s", (_name, text) => {
    expect(removeStatusOnlyMessages(text)).toBeNull();
  });
});

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

import { describe, expect, it } from "vitest";
import { judgeStateAfterStop } from "../../../src/agentapi/state-check.js";
import { summarizeState } from "../../../src/agentapi/state-file.js";

const state = (messages: Array<{ role: string }>) =>
  JSON.stringify({
    version: 1,
    messages: messages.map((m, id) => ({ id, message: "x", role: m.role, time: "2026-11-22T00:00:00Z" })),
    initial_prompt: "",
    initial_prompt_sent: false,
  });

describe("summarizeState", () => {
  it("counts messages and user messages of a version 1 file", () => {
    expect(summarizeState(state([{ role: "agent" }, { role: "user" }, { role: "agent" }]))).toEqual({
      kind: "valid",
      messages: 3,
      userMessages: 1,
      initialPromptSent: false,
    });
  });

  it.each([
    ["", "empty"],
    ["{not json", "not JSON"],
    ["[]", "not a JSON object"],
    ['{"version":2,"messages":[]}', "unsupported version 2"],
    ['{"messages":[]}', "unsupported version 0"],
  ])("rejects %j (%s)", (text, reason) => {
    const summary = summarizeState(text);
    expect(summary.kind).toBe("invalid");
    expect(summary.kind === "invalid" && summary.reason).toContain(reason);
  });

  it("reports a missing file", () => {
    expect(summarizeState(null)).toEqual({ kind: "missing" });
  });
});

describe("judgeStateAfterStop", () => {
  const on = { persistence: true, wasRunning: true };
  const valid = (messages: number) => ({ kind: "valid" as const, messages, userMessages: 1, initialPromptSent: false });

  it("keeps a state that holds at least what it held at start", () => {
    expect(judgeStateAfterStop(valid(6), valid(4), on)).toMatchObject({ action: "keep", lost: false });
  });

  it("restores the backup when AgentAPI overwrote the chat before loading it", () => {
    expect(judgeStateAfterStop(valid(1), valid(4), on)).toMatchObject({ action: "restore", lost: false });
  });

  it("restores the backup over a corrupt file", () => {
    expect(judgeStateAfterStop({ kind: "invalid", reason: "EOF" }, valid(4), on)).toMatchObject({ action: "restore" });
  });

  it("reports a loss when the file is corrupt and there is no backup", () => {
    expect(judgeStateAfterStop({ kind: "invalid", reason: "EOF" }, { kind: "missing" }, on)).toMatchObject({
      action: "keep",
      lost: true,
    });
  });

  it("checks nothing when persistence is off", () => {
    expect(
      judgeStateAfterStop({ kind: "missing" }, { kind: "missing" }, { persistence: false, wasRunning: true }),
    ).toMatchObject({ action: "keep", lost: false });
  });

  it("reports a loss when a running AgentAPI left no state file and there is no backup", () => {
    expect(judgeStateAfterStop({ kind: "missing" }, { kind: "missing" }, on)).toMatchObject({
      action: "keep",
      lost: true,
    });
  });

  it("accepts no state file when no AgentAPI was running", () => {
    expect(
      judgeStateAfterStop({ kind: "missing" }, { kind: "missing" }, { persistence: true, wasRunning: false }),
    ).toMatchObject({ lost: false });
  });
});

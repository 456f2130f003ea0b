import { describe, expect, it } from "vitest";
import { judgeStateAfterStop } from "../../../src/agentapi/state-check.js";
import { summarizeState } from "../../../src/agentapi/state-file.js";

const state = (...roles: string[]) => {
  const messages = roles.map((role, id) => ({ id, message: "x", role, time: "2026-11-22T00:00:00Z" }));
  return JSON.stringify({ version: 1, messages, initial_prompt: "", initial_prompt_sent: false });
};

describe("summarizeState", () => {
  it("counts messages and user messages of a version 1 file", () => {
    const want = { kind: "valid", messages: 3, userMessages: 1, initialPromptSent: false };
    expect(summarizeState(state("agent", "user", "agent"))).toEqual(want);
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

  const [missing, corrupt] = [{ kind: "missing" as const }, { kind: "invalid" as const, reason: "EOF" }];
  const off = { persistence: false, wasRunning: true };
  it.each([
    [
      "keeps a state that holds at least what it held at start",
      valid(6),
      valid(4),
      on,
      { action: "keep", lost: false },
    ],
    [
      "restores the backup when AgentAPI overwrote the chat before loading it",
      valid(1),
      valid(4),
      on,
      { action: "restore", lost: false },
    ],
    ["restores the backup over a corrupt file", corrupt, valid(4), on, { action: "restore" }],
    [
      "reports a loss when the file is corrupt and there is no backup",
      corrupt,
      missing,
      on,
      { action: "keep", lost: true },
    ],
    ["checks nothing when persistence is off", missing, missing, off, { action: "keep", lost: false }],
    [
      "reports a loss when a running AgentAPI left no state file and no backup",
      missing,
      missing,
      on,
      { action: "keep", lost: true },
    ],
    [
      "accepts no state file when no AgentAPI was running",
      missing,
      missing,
      { ...on, wasRunning: false },
      { lost: false },
    ],
  ] as const)("%s", (_, after, backup, opts, want) => {
    expect(judgeStateAfterStop(after, backup, opts)).toMatchObject(want);
  });
});

import { describe, expect, it } from "vitest";
import { judgeStateAfterStop } from "../../../src/agentapi/state-check.js";

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

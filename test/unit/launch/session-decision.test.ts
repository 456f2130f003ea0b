import { describe, expect, it } from "vitest";
import type { StateSummary } from "../../../src/agentapi/state-file.js";
import type { SessionProbe } from "../../../src/goose/session-records.js";
import { decideStart } from "../../../src/launch/session-decision.js";

const found = (messages: number): SessionProbe => {
  return { kind: "found", id: "20261122_1", messages, workingDir: "/home/coder", source: "test" };
};
const absent: SessionProbe = { kind: "absent", source: "test" };
const unknown: SessionProbe = { kind: "unknown", reason: "goose session list failed" };
const noState: StateSummary = { kind: "missing" };
const chat: StateSummary = { kind: "valid", messages: 4, userMessages: 1, initialPromptSent: false };
const emptyChat: StateSummary = { kind: "valid", messages: 0, userMessages: 0, initialPromptSent: false };
const corrupt: StateSummary = { kind: "invalid", reason: "not JSON" };

const start = { continueSession: true, sessionName: "task-1" };

describe("decideStart", () => {
  it.each([
    // continue, probe, state, mode, state action
    [true, found(3), chat, "warm", "keep"],
    [true, found(3), noState, "warm", "none"],
    [true, found(0), noState, "cold", "none"],
    [true, found(0), chat, "cold", "set-aside"],
    [true, absent, noState, "cold", "none"],
    [true, absent, chat, "cold", "set-aside"],
    [true, absent, emptyChat, "cold", "none"],
    [true, unknown, noState, "cold", "none"],
    [true, unknown, chat, "cold", "set-aside"],
    [false, found(3), chat, "cold", "set-aside"],
    [false, found(3), noState, "cold", "none"],
    [true, found(3), corrupt, "warm", "set-aside"],
    [true, absent, corrupt, "cold", "set-aside"],
  ] as const)("continue=%s probe=%o state=%o -> %s, state %s", (continueSession, probe, state, mode, stateAction) => {
    const decision = decideStart({ continueSession, sessionName: "task-1", probe, state });
    expect(decision.mode).toBe(mode);
    expect(decision.state).toBe(stateAction);
  });

  it("never resumes on an unknown probe, and says why", () => {
    const decision = decideStart({ ...start, probe: unknown, state: noState });
    expect(decision.reason).toContain("cannot lose the prompt");
  });

  describe("a supervisor's restart never goes cold on an unknown probe", () => {
    it.each([noState, chat, emptyChat, corrupt])("state %o: the restart fails and says why", (state) => {
      expect(() => decideStart({ ...start, probe: unknown, state, restart: true })).toThrow(
        'could not tell whether Goose still has session "task-1" (goose session list failed), so the restart did not start a new session in its place.',
      );
    });

    it.each([
      // probe, state, mode, state action: the same as a start when Goose answered
      [found(3), chat, "warm", "keep"],
      [absent, chat, "cold", "set-aside"],
      [found(0), noState, "cold", "none"],
    ] as const)("probe %o, state %o -> %s, state %s", (probe, state, mode, stateAction) => {
      const decision = decideStart({ ...start, probe, state, restart: true });
      expect([decision.mode, decision.state]).toEqual([mode, stateAction]);
    });
  });

  it("explains a lost Goose database when setting the chat aside", () => {
    const decision = decideStart({ ...start, probe: absent, state: chat });
    expect(decision.reason).toContain('no session named "task-1"');
    expect(decision.stateReason).toContain("4 message(s)");
  });

  describe("the saved chat belongs to one Goose session", () => {
    const probe: SessionProbe = { kind: "found", id: "20261122_3", messages: 2, workingDir: null, source: "test" };
    it.each([
      // owner recorded beside the state file, expected state action
      [null, "keep"],
      [{ session_name: "alpha", session_id: null }, "keep"],
      [{ session_name: "alpha", session_id: "20261122_3" }, "keep"],
      [{ session_name: "beta", session_id: null }, "set-aside"],
      [{ session_name: "beta", session_id: "20261122_3" }, "set-aside"],
      [{ session_name: "alpha", session_id: "20261101_1" }, "set-aside"],
    ] as const)("owner %o -> %s", (owner, action) => {
      const decision = decideStart({ ...start, sessionName: "alpha", probe, state: chat, owner });
      expect(decision.mode).toBe("warm");
      expect(decision.state).toBe(action);
    });

    it("names the session the chat belongs to when setting it aside", () => {
      const owner = { session_name: "beta", session_id: null };
      const decision = decideStart({ ...start, sessionName: "alpha", probe, state: chat, owner });
      expect(decision.stateReason).toContain('"beta"');
      expect(decision.stateReason).toContain('"alpha"');
    });
  });
});

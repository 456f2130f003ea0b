import { describe, expect, it } from "vitest";
import type { StateSummary } from "../../../src/agentapi/state-file.js";
import type { SessionProbe } from "../../../src/goose/session-records.js";
import { decideSession } from "../../../src/launch/session-decision.js";

const found = (messages: number): SessionProbe => ({ kind: "found", id: "1", messages, workingDir: "/w", source: "t" });
const absent: SessionProbe = { kind: "absent", source: "test" };
const unknown: SessionProbe = { kind: "unknown", reason: "goose session list failed" };
const noState: StateSummary = { kind: "missing" };
const chat: StateSummary = { kind: "valid", messages: 4, userMessages: 1, initialPromptSent: false };
const emptyChat: StateSummary = { kind: "valid", messages: 0, userMessages: 0, initialPromptSent: false };
// Goose's banner and nothing typed: what a start nobody typed in leaves.
const bannerOnly: StateSummary = { kind: "valid", messages: 1, userMessages: 0, initialPromptSent: false };
const corrupt: StateSummary = { kind: "invalid", reason: "not JSON" };

const start = { continueSession: true, sessionName: "task-1", prompt: true };

it.each([
  // continue, probe, state, mode, state action (a start with a prompt)
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
  const decision = decideSession({ continueSession, sessionName: "task-1", probe, state, prompt: true });
  expect([decision.mode, decision.state]).toEqual([mode, stateAction]);
});

describe("without a prompt, an empty session with the name is resumed, not doubled", () => {
  it.each([
    // continue, probe, state, mode, state action
    [true, found(0), noState, "warm", "none"],
    [true, found(0), bannerOnly, "warm", "keep"],
    [true, found(0), emptyChat, "warm", "keep"],
    [true, found(0), chat, "warm", "set-aside"],
    [true, found(0), corrupt, "warm", "set-aside"],
    [true, found(3), chat, "warm", "keep"],
    [true, absent, bannerOnly, "cold", "set-aside"],
    [true, unknown, noState, "cold", "none"],
    [false, found(0), bannerOnly, "cold", "set-aside"],
  ] as const)("continue=%s probe=%o state=%o -> %s, state %s", (continueSession, probe, state, mode, stateAction) => {
    const decision = decideSession({ continueSession, sessionName: "task-1", probe, state, prompt: false });
    expect([decision.mode, decision.state]).toEqual([mode, stateAction]);
  });

  it.each([
    // the owner recorded at the last start: a chat with nothing typed is kept whoever it belonged to
    [{ session_name: "task-1", session_id: null }],
    [{ session_name: "task-1", session_id: "20261101_1" }],
    [{ session_name: "other", session_id: null }],
  ])("owner %o: the banner-only chat is kept", (owner) => {
    const decision = decideSession({ ...start, prompt: false, probe: found(0), state: bannerOnly, owner });
    expect([decision.mode, decision.state]).toEqual(["warm", "keep"]);
  });

  it("says it resumes the empty session, and nothing of a prompt", () => {
    const decision = decideSession({ ...start, prompt: false, probe: found(0), state: bannerOnly });
    expect(decision.reason).toContain('Goose has session "task-1" (1) with no message yet; resuming it');
    expect(decision.reason).not.toMatch(/prompt/);
  });

  it("sets aside a chat the user typed in that the empty session does not hold, and says so", () => {
    const decision = decideSession({ ...start, prompt: false, probe: found(0), state: chat });
    expect(decision.stateReason).toBe(
      'the AgentAPI state file holds 1 user message(s), and Goose session "task-1" (1) holds none',
    );
  });

  it("an unknown probe: no word of a prompt there is not", () => {
    const decision = decideSession({ ...start, prompt: false, probe: unknown, state: noState });
    expect(decision.reason).not.toMatch(/prompt/);
  });
});

it("never resumes on an unknown probe, and says why", () => {
  expect(decideSession({ ...start, probe: unknown, state: noState }).reason).toContain("cannot lose the prompt");
});

describe("a supervisor's restart never goes cold on an unknown probe", () => {
  it.each([noState, chat, emptyChat, corrupt])("state %o: the restart fails and says why", (state) => {
    expect(() => decideSession({ ...start, probe: unknown, state, restart: true })).toThrow(
      'could not tell whether Goose still has session "task-1" (goose session list failed), so the restart did not start a new session in its place.',
    );
  });

  it.each([
    // probe, state, mode, state action: the same as a start when Goose answered
    [found(3), chat, "warm", "keep"],
    [absent, chat, "cold", "set-aside"],
    [found(0), noState, "cold", "none"],
  ] as const)("probe %o, state %o -> %s, state %s", (probe, state, mode, stateAction) => {
    const decision = decideSession({ ...start, probe, state, restart: true });
    expect([decision.mode, decision.state]).toEqual([mode, stateAction]);
  });
});

it("explains a lost Goose database when setting the chat aside", () => {
  const decision = decideSession({ ...start, probe: absent, state: chat });
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
    const decision = decideSession({ ...start, sessionName: "alpha", probe, state: chat, owner });
    expect([decision.mode, decision.state]).toEqual(["warm", action]);
  });

  it("names the session the chat belongs to when setting it aside", () => {
    const owner = { session_name: "beta", session_id: null };
    const decision = decideSession({ ...start, sessionName: "alpha", probe, state: chat, owner });
    expect(decision.stateReason).toMatch(/"beta".*"alpha"|"alpha".*"beta"/);
  });
});

// Which AgentAPI state files AgentAPI itself loads. The cases come from the
// rules of its loader (loadStateLocked in lib/screentracker/pty_conversation.go
// and the types in lib/screentracker/conversation.go, coder/agentapi @ v0.12.2)
// and Go's encoding/json and time packages, which src/agentapi/state-file.ts lists;
// each verdict was also checked by decoding the same text with Go's
// encoding/json into copies of those types (Go 1.26.8).

import { describe, expect, it } from "vitest";
import { summarizeState } from "../../../src/agentapi/state-file.js";

/** A version 1 file whose one message has these members (written as given). */
const withMessage = (members: string) => `{"version":1,"messages":[{${members}}]}`;
const at = (time: string) => withMessage(`"id":0,"message":"hi","role":"user","time":"${time}"`);
const withId = (id: string) => withMessage(`"id":${id},"message":"hi","role":"user","time":"2026-11-22T00:00:00Z"`);

const CASES: Array<[string, string, boolean]> = [
  ["a file AgentAPI wrote", at("2026-11-22T10:15:30.123456789Z"), true],
  ["a time with an offset", at("2026-11-22T10:15:30+05:30"), true],
  ["the largest offset", at("2026-11-22T10:15:30-23:59"), true],
  ["29 February of a leap year", at("2024-02-29T00:00:00Z"), true],
  ["29 February of 2000", at("2000-02-29T00:00:00Z"), true],
  ["more than nine fraction digits", at("2026-11-22T10:15:30.1234567891234Z"), true],
  ["month 13, day 45, hour 25, minute and second 61", at("2026-13-45T25:61:61Z"), false],
  ["30 February", at("2026-02-30T00:00:00Z"), false],
  ["29 February of a common year", at("2025-02-29T00:00:00Z"), false],
  ["29 February of 1900", at("1900-02-29T00:00:00Z"), false],
  ["31 April", at("2026-04-31T00:00:00Z"), false],
  ["day 0", at("2026-04-00T00:00:00Z"), false],
  ["hour 24", at("2026-01-01T24:00:00Z"), false],
  ["minute 60", at("2026-01-01T23:60:00Z"), false],
  ["a leap second", at("2026-12-31T23:59:60Z"), false],
  // Go's strict RFC 3339 checks are switched off (parseStrictRFC3339 in time/format_rfc3339.go).
  ["an offset of 24 hours", at("2026-01-01T00:00:00+24:00"), true],
  ["an offset minute of 60", at("2026-01-01T00:00:00+01:60"), true],
  ["an offset of 25 hours", at("2026-01-01T00:00:00+25:00"), false],
  ["an offset minute of 61", at("2026-01-01T00:00:00+01:61"), false],
  ["a one-digit hour", at("2026-01-01T1:00:00Z"), true],
  ["a one-digit minute", at("2026-01-01T10:0:00Z"), false],
  ["a one-digit day", at("2026-01-1T10:00:00Z"), false],
  ["a lower-case t", at("2026-01-01t00:00:00Z"), false],
  ["a lower-case z", at("2026-01-01T00:00:00z"), false],
  ["a comma before the fraction", at("2026-01-01T00:00:00,5Z"), true],
  ["a point without a fraction", at("2026-01-01T00:00:00.Z"), false],
  ["a space for the T", at("2026-01-01 00:00:00Z"), false],
  ["no time zone", at("2026-01-01T00:00:00"), false],
  ["an escaped Z, which Go does not decode before parsing", at("2026-01-01T00:00:00\\u005a"), false],
  ["a time that is a number", withMessage('"time":1700000000'), false],
  ["a null time", withMessage('"id":0,"time":null'), true],
  ["id 0", withId("0"), true],
  ["id -0", withId("-0"), true],
  ["the largest 64-bit id", withId("9223372036854775807"), true],
  ["the smallest 64-bit id", withId("-9223372036854775808"), true],
  ["id 1.0", withId("1.0"), false],
  ["id 1e300", withId("1e300"), false],
  ["id 1e3", withId("1e3"), false],
  ["an id beyond 64 bits", withId("9223372036854775808"), false],
  ["an id that is a string", withId('"1"'), false],
  ["a null id", withId("null"), true],
  ["a role that is a number", withMessage('"role":5'), false],
  ["a message that is a boolean", withMessage('"message":true'), false],
  ["a key in another case", withMessage('"ID":"x"'), false],
  ["a key with a long s, which Go folds to s", '{"version":1,"meſſages":5}', false],
  ["a key with the Kelvin sign, which Go folds to k (no field has one)", withMessage('"\u212aid":"x"'), true],
  ["an unknown key", withMessage('"extra":[1.5,"x",{}]'), true],
  ["a message that is a number", '{"version":1,"messages":[1]}', false],
  ["a null message", '{"version":1,"messages":[null]}', true],
  ["no messages", '{"version":1}', true],
  ["null messages", '{"version":1,"messages":null}', true],
  ["messages that are an object", '{"version":1,"messages":{}}', false],
  ["version 1.0", '{"version":1.0,"messages":[]}', false],
  ["version 1e0", '{"version":1e0,"messages":[]}', false],
  ["version as a string", '{"version":"1","messages":[]}', false],
  ["version 2", '{"version":2,"messages":[]}', false],
  ["no version", '{"messages":[]}', false],
  ["a later version member overrides an earlier one", '{"version":1,"messages":[],"VERSION":2}', false],
  ["an earlier bad member fails even when a later one is good", '{"version":"1","version":1,"messages":[]}', false],
  ["initial_prompt as a number", '{"version":1,"messages":[],"initial_prompt":1}', false],
  ["initial_prompt_sent as a string", '{"version":1,"messages":[],"initial_prompt_sent":"true"}', false],
  ["text after the first value, which Decode never reads", '{"version":1,"messages":[]} trailing', true],
  ["a top-level null", "null", false],
  ["a top-level array", "[]", false],
  ["a truncated file", '{"version":1,"messages":[{"id":0', false],
];

describe("summarizeState accepts exactly what AgentAPI's decoder accepts", () => {
  it.each(CASES)("%s", (_, text, accepted) => {
    const summary = summarizeState(text);
    expect(summary.kind, summary.kind === "invalid" ? summary.reason : "").toBe(accepted ? "valid" : "invalid");
  });

  it("counts the roles Go reads, whatever the key's case", () => {
    const text =
      '{"version":1,"messages":[{"ROLE":"user"},{"role":"agent"},{"Role":"user"}],"initial_prompt_sent":true}';
    expect(summarizeState(text)).toEqual({ kind: "valid", messages: 3, userMessages: 2, initialPromptSent: true });
  });

  it("counts messages and user messages, in AgentAPI's own format with nanosecond times and offsets", () => {
    const times = ["2026-11-22T10:00:00.123456789Z", "2026-11-22T10:00:00+02:00", "2026-11-22T00:00:00Z"];
    const messages = ["agent", "user", "agent"].map((role, id) => ({ id, message: "x", role, time: times[id] }));
    const text = JSON.stringify({ version: 1, messages, initial_prompt: "", initial_prompt_sent: false });
    expect(summarizeState(text)).toEqual({ kind: "valid", messages: 3, userMessages: 1, initialPromptSent: false });
  });

  it("reports a missing file", () => {
    expect(summarizeState(null)).toEqual({ kind: "missing" });
  });

  const ok = { id: 0, message: "x", role: "agent", time: "2026-11-22T00:00:00Z" };
  const one = (message: unknown) => JSON.stringify({ version: 1, messages: [message] });
  it.each([
    ["", "empty"],
    ["{not json", "not JSON"],
    ["[]", "not a JSON object"],
    ['{"version":2,"messages":[]}', "unsupported version 2"],
    ['{"messages":[]}', "unsupported version 0"],
    [one({ ...ok, id: "0" }), "id"],
    [one({ ...ok, message: 5 }), "message"],
    [one({ ...ok, role: 1 }), "role"],
    [one({ ...ok, time: "yesterday" }), "time"],
    [one({ ...ok, id: 1.5 }), "id"],
    [one("text"), "not an object"],
  ])("refuses %j, naming why (%s)", (text, reason) => {
    const summary = summarizeState(text);
    expect(summary.kind).toBe("invalid");
    expect(summary.kind === "invalid" && summary.reason).toContain(reason);
  });

  it("names what AgentAPI would refuse", () => {
    expect(summarizeState(at("2026-02-30T00:00:00Z"))).toEqual({
      kind: "invalid",
      reason:
        'message 0\'s time "2026-02-30T00:00:00Z" is not an RFC 3339 time Go accepts (AgentAPI would refuse the whole file)',
    });
    expect(summarizeState(withId("1e300"))).toEqual({
      kind: "invalid",
      reason: "message 0's id is spelled 1e300, not as an integer (AgentAPI would refuse the whole file)",
    });
  });
});

// Which AgentAPI state files AgentAPI itself loads. The cases come from the
// rules of its loader (loadStateLocked in lib/screentracker/pty_conversation.go
// and the types in lib/screentracker/conversation.go, coder/agentapi @ v0.12.2)
// and Go's encoding/json and time packages, which src/agentapi/state-file.ts lists;
// each verdict was also checked by decoding the same text with Go's
// encoding/json into copies of those types (Go 1.26.8).

import { expect, it } from "vitest";
import { summarizeState } from "../../../src/agentapi/state-file.js";

/** A version 1 file whose one message has these members (written as given). */
const withMessage = (members: string) => `{"version":1,"messages":[{${members}}]}`;
const at = (time: string) => withMessage(`"id":0,"message":"hi","role":"user","time":"${time}"`);
const withId = (id: string) => withMessage(`"id":${id},"message":"hi","role":"user","time":"2026-11-22T00:00:00Z"`);

// Message times AgentAPI loads, and ones it refuses (a refused time refuses the whole file).
const GOOD_TIMES = [
  ...["2026-11-22T10:15:30.123456789Z", "2026-11-22T10:15:30+05:30", "2026-11-22T10:15:30-23:59"],
  ...["2024-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "2026-11-22T10:15:30.1234567891234Z"],
  // Go's strict RFC 3339 checks are switched off (parseStrictRFC3339 in time/format_rfc3339.go).
  ...["2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+01:60", "2026-01-01T1:00:00Z", "2026-01-01T00:00:00,5Z"],
];
const BAD_TIMES = [
  ...["2026-13-45T25:61:61Z", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "1900-02-29T00:00:00Z"],
  ...["2026-04-31T00:00:00Z", "2026-04-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z"],
  ...["2026-12-31T23:59:60Z", "2026-01-01T00:00:00+25:00", "2026-01-01T00:00:00+01:61", "2026-01-01T10:0:00Z"],
  ...["2026-01-1T10:00:00Z", "2026-01-01t00:00:00Z", "2026-01-01T00:00:00z", "2026-01-01T00:00:00.Z"],
  ...["2026-01-01 00:00:00Z", "2026-01-01T00:00:00"],
  "2026-01-01T00:00:00\\u005a", // an escaped Z, which Go does not decode before parsing
];
const GOOD_IDS = ["0", "-0", "9223372036854775807", "-9223372036854775808", "null"];
const BAD_IDS = ["1.0", "1e300", "1e3", "9223372036854775808", '"1"'];

const CASES: Array<[string, boolean]> = [
  ...GOOD_TIMES.map((t) => [at(t), true] as [string, boolean]),
  ...BAD_TIMES.map((t) => [at(t), false] as [string, boolean]),
  ...GOOD_IDS.map((id) => [withId(id), true] as [string, boolean]),
  ...BAD_IDS.map((id) => [withId(id), false] as [string, boolean]),
  [withMessage('"time":1700000000'), false],
  [withMessage('"id":0,"time":null'), true],
  [withMessage('"role":5'), false],
  [withMessage('"message":true'), false],
  [withMessage('"ID":"x"'), false], // a key in another case
  ['{"version":1,"meſſages":5}', false], // Go folds the long s to s
  [withMessage('"\u212aid":"x"'), true], // Go folds the Kelvin sign to k, and no field has one
  [withMessage('"extra":[1.5,"x",{}]'), true],
  ['{"version":1,"messages":[1]}', false],
  ['{"version":1,"messages":[null]}', true],
  ['{"version":1}', true],
  ['{"version":1,"messages":null}', true],
  ['{"version":1,"messages":{}}', false],
  ['{"version":1.0,"messages":[]}', false],
  ['{"version":1e0,"messages":[]}', false],
  ['{"version":"1","messages":[]}', false],
  ['{"version":1,"messages":[],"VERSION":2}', false], // a later member overrides an earlier one
  ['{"version":"1","version":1,"messages":[]}', false], // an earlier bad member fails all the same
  ['{"version":1,"messages":[],"initial_prompt":1}', false],
  ['{"version":1,"messages":[],"initial_prompt_sent":"true"}', false],
  ['{"version":1,"messages":[]} trailing', true], // Decode never reads past the first value
  ["null", false],
  ['{"version":1,"messages":[{"id":0', false],
];

it.each(CASES)("accepts %s exactly when AgentAPI's decoder does: %s", (text, accepted) => {
  const summary = summarizeState(text);
  expect(summary.kind, summary.kind === "invalid" ? summary.reason : "").toBe(accepted ? "valid" : "invalid");
});

it("counts the roles Go reads, whatever the key's case", () => {
  const text = '{"version":1,"messages":[{"ROLE":"user"},{"role":"agent"},{"Role":"user"}],"initial_prompt_sent":true}';
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

// Sizes Go decodes that a recursive reader, or a backtracking regular
// expression, could not: each verdict checked with Go 1.26.8's encoding/json
// as above (its scanner refuses nesting deeper than 10,000: maxNestingDepth
// in encoding/json/scanner.go).
const nested = (depth: number) =>
  `{"version":1,"messages":[],"extra":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
const long = (text: string) => `{"version":1,"messages":[{"id":0,"message":"${text}","role":"user"}]}`;

it.each([
  ["nesting 10,000 deep", nested(10_000), { kind: "valid", messages: 0, userMessages: 0, initialPromptSent: false }],
  [
    "a message of 10,000,000 characters",
    long("a".repeat(10_000_000)),
    { kind: "valid", messages: 1, userMessages: 1, initialPromptSent: false },
  ],
  [
    "a message of 5,000,000 escapes",
    long("\\n".repeat(5_000_000)),
    { kind: "valid", messages: 1, userMessages: 1, initialPromptSent: false },
  ],
  [
    "nesting 10,001 deep, which Go refuses",
    nested(10_001),
    {
      kind: "invalid",
      reason: `not JSON (nesting deeper than 10000 levels, which AgentAPI's Go decoder refuses too, at position ${'{"version":1,"messages":[],"extra":'.length + 9_999})`,
    },
  ],
])("%s: read as Go reads it, without exhausting the stack", (_name, text, expected) => {
  expect(summarizeState(text)).toEqual(expected);
});

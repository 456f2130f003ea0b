import { type JsonValue, readFirstJsonValue } from "../lib/json-as-written.js";

export type StateSummary =
  | { kind: "missing" }
  | { kind: "invalid"; reason: string }
  | { kind: "valid"; messages: number; userMessages: number; initialPromptSent: boolean };

// What AgentAPI's loader accepts (loadStateLocked in lib/screentracker/
// pty_conversation.go, coder/agentapi @ v0.12.2): json.NewDecoder(f).Decode
// into AgentState { version int; messages []ConversationMessage;
// initial_prompt string; initial_prompt_sent bool }, each message
// { id int; message string; role ConversationRole (a string); time time.Time }
// (lib/screentracker/conversation.go), then version must be 1. Go's
// encoding/json rules that matter here:
// - one wrong type anywhere fails the whole Decode, and the next save then
//   overwrites the file; null leaves a field at its zero value;
// - an int takes a number only as strconv.ParseInt(spelling, 10, 64) does:
//   no fraction or exponent, within 64 bits;
// - a key matches a field ignoring case (Unicode simple folding, which for
//   these ASCII names adds only the Kelvin sign for k and the long s for s),
//   and a later member overwrites an earlier one;
// - time.Time's UnmarshalJSON takes the string's raw bytes, escapes
//   undecoded, and parses them as RFC 3339 (isGoRfc3339);
// - Decode reads the first value and ignores what follows it.

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Why Go would refuse this value for an int, or null. */
function intProblem(value: JsonValue): string | null {
  if (value.kind === "null") return null;
  if (value.kind !== "number") return `is a ${value.kind}, not an integer`;
  if (!/^-?[0-9]+$/.test(value.raw)) return `is spelled ${value.raw}, not as an integer`;
  const n = BigInt(value.raw);
  return n < INT64_MIN || n > INT64_MAX ? `${value.raw} does not fit in 64 bits` : null;
}

function typeProblem(value: JsonValue, kind: "string" | "bool"): string | null {
  return value.kind === "null" || value.kind === kind ? null : `is a ${value.kind}, not a ${kind}`;
}

const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,]\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * Whether Go's time.Time.UnmarshalJSON accepts `text` (the string's raw
 * bytes). Its parseStrictRFC3339 tries parseRFC3339, then falls back to
 * time.Parse(time.RFC3339, ...) with the stricter checks switched off
 * (time/format_rfc3339.go, Go 1.20 and later). Together they take a one- or
 * two-digit hour below 24, minutes and seconds below 60, the day within its
 * month, a fraction after "." or ",", and an offset of at most 24:60.
 */
function isGoRfc3339(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  const days = month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  if (day < 1 || day > days) return false;
  return m[7] === undefined || (Number(m[7]) <= 24 && Number(m[8]) <= 60);
}

function timeProblem(value: JsonValue): string | null {
  if (value.kind === "null") return null;
  if (value.kind !== "string") return `is a ${value.kind}, not a string`;
  return isGoRfc3339(value.raw) ? null : `${JSON.stringify(value.raw)} is not an RFC 3339 time Go accepts`;
}

/** A key as Go matches it to a field name: case folded (see above). */
function folded(key: string): string {
  if (/^[a-z_]*$/.test(key)) return key;
  return key
    .replace(/\u017f/g, "s")
    .replace(/\u212a/g, "k")
    .replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The members of an object that Go assigns to the named fields, in order; the last one wins. */
function fields(value: JsonValue & { kind: "object" }, names: string[]): Array<[string, JsonValue]> {
  const found: Array<[string, JsonValue]> = [];
  for (const [key, member] of value.members) {
    const name = folded(key);
    if (names.includes(name)) found.push([name, member]);
  }
  return found;
}

const MESSAGE_CHECKS: Record<string, (value: JsonValue) => string | null> = {
  id: intProblem,
  message: (value) => typeProblem(value, "string"),
  role: (value) => typeProblem(value, "string"),
  time: timeProblem,
};

const MESSAGE_FIELDS = Object.keys(MESSAGE_CHECKS);

/** Why Go would refuse one saved message, or null; also its role. */
function readMessage(value: JsonValue): { problem: string | null; role: string } {
  if (value.kind === "null") return { problem: null, role: "" };
  if (value.kind !== "object") return { problem: ` is a ${value.kind}, not an object`, role: "" };
  let role = "";
  for (const [name, member] of fields(value, MESSAGE_FIELDS)) {
    const problem = MESSAGE_CHECKS[name]?.(member) ?? null;
    if (problem) return { problem: `'s ${name} ${problem}`, role };
    if (name === "role") role = member.kind === "string" ? member.value : "";
  }
  return { problem: null, role };
}

/** Reads an AgentAPI state file the way AgentAPI would accept it (see above). */
export function summarizeState(text: string | null): StateSummary {
  if (text === null) return { kind: "missing" };
  if (text.trim() === "") return { kind: "invalid", reason: "the file is empty" };
  let root: JsonValue;
  try {
    root = readFirstJsonValue(text);
  } catch (error) {
    return { kind: "invalid", reason: `not JSON (${(error as Error).message})` };
  }
  if (root.kind !== "object" && root.kind !== "null") return { kind: "invalid", reason: "not a JSON object" };
  let version = "0";
  let messages: JsonValue[] = [];
  let initialPromptSent = false;
  const members = root.kind === "object" ? root : { kind: "object" as const, members: [] };
  for (const [name, value] of fields(members, ["version", "messages", "initial_prompt", "initial_prompt_sent"])) {
    if (name === "version") {
      const problem = intProblem(value);
      if (problem) return { kind: "invalid", reason: `version ${problem}` };
      version = value.kind === "number" ? value.raw : "0";
    } else if (name === "messages") {
      if (value.kind !== "array" && value.kind !== "null")
        return { kind: "invalid", reason: "messages is not an array" };
      messages = value.kind === "array" ? value.items : [];
    } else if (name === "initial_prompt") {
      const problem = typeProblem(value, "string");
      if (problem) return { kind: "invalid", reason: `initial_prompt ${problem}` };
    } else {
      const problem = typeProblem(value, "bool");
      if (problem) return { kind: "invalid", reason: `initial_prompt_sent ${problem}` };
      initialPromptSent = value.kind === "bool" && value.value;
    }
  }
  let userMessages = 0;
  for (const [index, message] of messages.entries()) {
    const { problem, role } = readMessage(message);
    if (problem)
      return { kind: "invalid", reason: `message ${index}${problem} (AgentAPI would refuse the whole file)` };
    if (role === "user") userMessages++;
  }
  if (BigInt(version) !== 1n)
    return { kind: "invalid", reason: `unsupported version ${version} (AgentAPI reads version 1)` };
  return { kind: "valid", messages: messages.length, userMessages, initialPromptSent };
}

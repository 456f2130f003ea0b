// npm run compat's pure half (tools/compat/verdicts.ts): its arguments, the
// verdict each behaviour gets from what was observed, the version facts, and
// the report's lines.
import { describe, expect, it } from "vitest";
import {
  type Answer,
  BEHAVIOURS,
  type ColdStartSeen,
  type CompatReport,
  type CrashSeen,
  formatReport,
  incomplete,
  judgeColdStart,
  judgeConverse,
  judgeCrash,
  judgeStop,
  judgeStopDuringTurn,
  judgeWarmStart,
  notRun,
  parseArgs,
  passed,
  type StopSeen,
  startMode,
  stopLine,
  testedGooseVersion,
  variableDefault,
  verdictLine,
  verifiedRangeLine,
  versionOf,
  type WarmStartSeen,
} from "../../../tools/compat/verdicts.js";

const resolve = (p: string) => `/abs/${p}`;

describe("parseArgs", () => {
  it.each([
    [[], { keep: false }],
    [["--keep"], { keep: true }],
    [["--goose", "bin/goose"], { keep: false, goose: "/abs/bin/goose" }],
    [["--goose=bin/goose", "--keep"], { keep: true, goose: "/abs/bin/goose" }],
  ])("%j", (argv, cli) => {
    expect(parseArgs(argv, resolve)).toEqual(cli);
  });

  it.each([["-h"], ["--help"], ["--keep", "-h"]])("%s asks for the usage", (...argv) => {
    expect(parseArgs(argv, resolve)).toBe("help");
  });

  it.each([
    [["--goose"], "--goose needs the path of a goose binary"],
    [["--goose="], "--goose needs the path of a goose binary"],
    [["--keep=yes"], "--keep takes no value"],
    [["--task"], "unknown option --task"],
    [["goose"], "unknown option goose"],
  ])("%j: %s", (argv, message) => {
    expect(() => parseArgs(argv, resolve)).toThrow(message);
  });
});

const answer = (text: string, fromModel = true, sessionId = "20261206_1"): Answer => ({ text, sessionId, fromModel });
const GRACEFUL = [
  "goose-module: turn: agent idle at its prompt",
  "goose-module: Goose exited on /exit, and AgentAPI with it",
  "goose-module: stop finished in 900 ms",
].join("\n");
const stop = (over: Partial<StopSeen> = {}): StopSeen => ({
  output: GRACEFUL,
  ms: 1200,
  budgetMs: 29_000,
  left: [],
  ...over,
});

describe("cold start with a prompt", () => {
  const seen: ColdStartSeen = {
    mode: "cold",
    sessionName: "coder-ws",
    sessions: ["20261206_1"],
    firstUserText: "Create NOTES.md",
    prompt: "Create NOTES.md",
    promptDeliveries: 1,
    answer: answer("ack 1: Create NOTES.md"),
  };

  it("passes, saying the session and the answer", () => {
    const v = judgeColdStart(seen);
    expect(v.ok).toBe(true);
    expect(v.reason).toBe(
      'cold start; new session 20261206_1 named coder-ws, the task prompt its first message, delivered once; answered "ack 1: Create NOTES.md"',
    );
  });

  it.each<[string, Partial<ColdStartSeen>, string]>([
    ["a warm start", { mode: "warm" }, "the start log says warm start, not cold"],
    ["two sessions", { sessions: ["20261206_1", "b"] }, "2 Goose sessions named coder-ws, not one new session"],
    ["another first message", { firstUserText: "hello" }, 'the session\'s first message is "hello", not the prompt'],
    ["a second delivery", { promptDeliveries: 2 }, "the prompt delivered 2 time(s), not once"],
    ["no reply", { answer: null }, "the prompt: Goose stored no reply"],
    [
      "a stored model error",
      { answer: answer("", false) },
      "the prompt: Goose's reply is not the model's answer: \"\"",
    ],
  ])("fails on %s", (_, over, reason) => {
    const v = judgeColdStart({ ...seen, ...over });
    expect(v).toEqual({ behaviour: "cold start with a prompt", ok: false, reason });
  });
});

describe("converse", () => {
  it("passes when the message was delivered once and the model answered in the session", () => {
    expect(
      judgeConverse({ deliveries: 1, answer: answer("ack 2: hi"), sessionId: "20261206_1", ms: 1400 }),
    ).toMatchObject({ ok: true, reason: 'POST /message answered in 1400 ms in session 20261206_1: "ack 2: hi"' });
  });

  it("fails on an answer in another session", () => {
    expect(
      judgeConverse({ deliveries: 1, answer: answer("ack 2: hi", true, "x"), sessionId: "20261206_1", ms: 1 }).reason,
    ).toBe("the message: answered in session x, not 20261206_1");
  });
});

describe("stop during a turn", () => {
  const output = [
    "goose-module: turn: the turn still ran after 5000 ms and was cancelled; Goose keeps the message and continues it at the next start",
    "goose-module: Goose exited on /exit, and AgentAPI with it",
  ].join("\n");

  it("passes on a cancelled turn, /exit, the bound kept and the message saved", () => {
    const v = judgeStopDuringTurn({ stop: stop({ output, ms: 9000 }), savedInterrupted: true, savedMessages: 6 });
    expect(v.ok).toBe(true);
    expect(v.reason).toMatch(/^turn: the turn still ran after 5000 ms and was cancelled;/);
    expect(v.reason).toContain("stop 9.0 s (bound 29.0 s)");
  });

  it("fails, with every reason, when the stop met no turn, signalled, overran, left a process and saved nothing", () => {
    const v = judgeStopDuringTurn({
      stop: stop({
        output: "goose-module: turn: agent idle at its prompt\ngoose-module: sent SIGTERM to AgentAPI (PID 7)",
        ms: 31_000,
        left: [42],
      }),
      savedInterrupted: false,
      savedMessages: 4,
    });
    expect(v.ok).toBe(false);
    expect(v.reason.split("; ")).toEqual([
      'the stop did not meet the running turn ("turn: agent idle at its prompt")',
      "Goose did not exit on /exit (see the stop's log)",
      'the stop signalled AgentAPI or Goose: "goose-module: sent SIGTERM to AgentAPI (PID 7)"',
      "the stop took 31.0 s, over its 29.0 s bound",
      "still running after the stop: PIDs 42",
      "the saved chat (4 messages) lacks the interrupted message",
    ]);
  });

  it("does not count the supervisor's stand-down fallback as a signal to Goose", () => {
    const fallback =
      "goose-module: the supervisor (PID 9) did not stand down within 2000 ms of SIGTERM; SIGKILL to its process group";
    expect(
      judgeStopDuringTurn({
        stop: stop({ output: `${output}\n${fallback}` }),
        savedInterrupted: true,
        savedMessages: 6,
      }).ok,
    ).toBe(true);
  });
});

describe("warm start", () => {
  const seen: WarmStartSeen = {
    mode: "warm",
    sessions: ["20261206_1"],
    sessionId: "20261206_1",
    decision: { action: "continue", reason: "the last message was never answered" },
    chat: { saved: 6, shown: 8, same: true },
    continuation: answer("ack 4: a long piece of work"),
    modelGotInterrupted: true,
    sent: [
      { label: "the task prompt", count: 1 },
      { label: "the continuation", count: 1 },
    ],
    unexpected: [],
  };

  it("passes", () => {
    expect(judgeWarmStart(seen).ok).toBe(true);
  });

  it.each<[string, Partial<WarmStartSeen>, string[]]>([
    [
      "a new session",
      { sessions: ["20261206_2", "20261206_1"] },
      ["sessions with its name: 20261206_2, 20261206_1, not only 20261206_1"],
    ],
    [
      "a shorter chat",
      { chat: { saved: 6, shown: 2, same: false } },
      ["the chat not restored: 6 message(s) saved, 2 shown"],
    ],
    [
      "another chat",
      { chat: { saved: 6, shown: 7, same: false } },
      ["the chat not restored: 6 message(s) saved, 7 shown, not the same"],
    ],
    [
      "a turn not carried on (an error row taken for an answer)",
      {
        decision: { action: "none", reason: "the last turn was answered" },
        continuation: null,
        sent: [{ label: "the continuation", count: 0 }],
      },
      [
        "the interrupted turn was not carried on (none: the last turn was answered)",
        "the continuation delivered 0 time(s), not once",
      ],
    ],
    [
      "a prompt sent again and a stray message",
      { sent: [{ label: "the task prompt", count: 2 }], unexpected: ["Create NOTES.md"] },
      ["the task prompt delivered 2 time(s), not once", '1 user message(s) nobody sent, first "Create NOTES.md"'],
    ],
    [
      "a continuation the model never saw with the message",
      { modelGotInterrupted: false },
      ["the model was not asked again with the interrupted message and the continuation"],
    ],
  ])("fails on %s", (_, over, reasons) => {
    const v = judgeWarmStart({ ...seen, ...over });
    expect(v.ok).toBe(false);
    expect(v.reason.split("; ")).toEqual(reasons);
  });
});

describe("crash and relaunch", () => {
  const seen: CrashSeen = {
    killed: "Goose",
    killedGone: true,
    backMs: 2300,
    mode: "warm",
    sessions: ["20261206_1"],
    sessionId: "20261206_1",
    supervisorRestarted: true,
    autosaved: true,
    chat: { saved: 8, shown: 8, same: true },
    after: answer("ack 5: are you back"),
    sent: [{ label: "the task prompt", count: 1 }],
    unexpected: [],
  };

  it("passes, with the relaunch time", () => {
    expect(judgeCrash(seen).reason).toMatch(
      /^kill -9 Goose: the supervisor relaunched it warm in 2\.3 s, same session/,
    );
  });

  it("fails on a cold relaunch without a supervisor restart or an autosave", () => {
    expect(
      judgeCrash({ ...seen, mode: "cold", supervisorRestarted: false, autosaved: false }).reason.split("; "),
    ).toEqual([
      "the supervisor's log has no restart after an exit without a stop",
      "the relaunch was cold, not warm",
      "the supervisor had not saved the chat after the last turn before the crash",
    ]);
  });
});

describe("stop", () => {
  it("passes on an idle /exit with every message delivered once", () => {
    const v = judgeStop({ stop: stop(), sent: [{ label: "the task prompt", count: 1 }], unexpected: [] });
    expect(v.ok).toBe(true);
    expect(v.reason).toMatch(/^turn: agent idle at its prompt; Goose exited on \/exit/);
  });

  it("fails on a process left running", () => {
    expect(judgeStop({ stop: stop({ left: [5, 6] }), sent: [], unexpected: [] }).reason).toBe(
      "still running after the stop: PIDs 5, 6",
    );
  });
});

describe("verdict lines and the report", () => {
  it("a behaviour that could not complete, and the ones not run after it", () => {
    const timedOut = "timed out after 60000 ms waiting for Goose's answer to the continuation (in its database)";
    expect(verdictLine(incomplete("warm start", timedOut))).toBe(`FAIL 4 warm start: could not complete: ${timedOut}`);
    expect(verdictLine(notRun("stop", "warm start"))).toBe("FAIL 6 stop: not run: 4 (warm start) could not complete");
  });

  it("an error of several lines: its first line", () => {
    expect(
      incomplete("converse", "AgentAPI stopped answering on port 1. Last lines of agentapi.log:\npanic").reason,
    ).toBe("could not complete: AgentAPI stopped answering on port 1. Last lines of agentapi.log:");
  });

  const report = (over: Partial<CompatReport> = {}): CompatReport => ({
    goose: { kind: "real", path: "/w/goose", versionOutput: " 1.47.0\n" },
    agentapiVersion: "0.12.2",
    tested: "1.47.0",
    rangeLine: null,
    model: "openai/gpt-4o via the local model stand-in",
    verdicts: BEHAVIOURS.map((behaviour) => ({ behaviour, ok: true, reason: "fine" })),
    runDir: "/r/.tmp/lifecycle-x",
    kept: false,
    totalMs: 61_000,
    ...over,
  });

  it("all six passed: RESULT PASS with the version", () => {
    const text = formatReport(report(), (p) => p.replace("/r/", ""));
    expect(passed(report())).toBe(true);
    expect(text).toContain('goose     /w/goose: --version "1.47.0" -> 1.47.0');
    expect(text).toContain("the release the module is tested with (main.tf tested_versions: 1.47.0)");
    expect(text).toContain("start log: the module's start log does not say whether this Goose is verified");
    expect(text).toContain("PASS 1 cold start with a prompt: fine");
    expect(text.split("\n").at(-1)).toBe("RESULT: PASS (6/6) goose 1.47.0");
  });

  it("one failed, or fewer than six verdicts: RESULT FAIL", () => {
    const one = report({
      goose: { kind: "double", path: "/d", versionOutput: " 1.48.0" },
      rangeLine: "goose 1.48.0: not verified with this module (verified: 1.47.0)",
      verdicts: BEHAVIOURS.map((behaviour, i) => ({ behaviour, ok: i !== 2, reason: "x" })),
    });
    const text = formatReport(one, (p) => p);
    expect(text).toContain("the Goose test double");
    expect(text).toContain("not the release the module is tested with (1.47.0, main.tf tested_versions)");
    expect(text).toContain("start log: goose 1.48.0: not verified with this module (verified: 1.47.0)");
    expect(text.split("\n").at(-1)).toBe("RESULT: FAIL (1 of 6 failed) goose 1.48.0");
    expect(passed(report({ verdicts: [] }))).toBe(false);
  });
});

describe("what the module's files and logs say", () => {
  it.each([
    [" 1.47.0\n", "1.47.0"],
    ["goose 1.53.0-rc.1", "1.53.0-rc.1"],
    ["nothing", null],
  ])("versionOf(%j)", (output, version) => {
    expect(versionOf(output)).toBe(version);
  });

  it("testedGooseVersion reads main.tf's tested_versions, not another goose_version", () => {
    const mainTf = [
      "locals {",
      '  goose_version = "9.9.9"',
      "  tested_versions = {",
      '    goose_version    = "1.47.0"',
      '    agentapi_version = "v0.12.2"',
      "  }",
      "}",
    ].join("\n");
    expect(testedGooseVersion(mainTf)).toBe("1.47.0");
    expect(testedGooseVersion("locals {}")).toBeNull();
  });

  it("variableDefault reads the named variable's own default", () => {
    const tf = [
      'variable "a" {',
      "  type    = number",
      "  default = 5",
      "  validation {",
      "    condition = var.a >= 0",
      "  }",
      "}",
      "",
      'variable "b" {',
      "  type = number",
      "}",
    ].join("\n");
    expect(variableDefault(tf, "a")).toBe(5);
    expect(variableDefault(tf, "b")).toBeNull();
    expect(variableDefault(tf, "c")).toBeNull();
  });

  it("startMode and stopLine read the module's own log lines", () => {
    expect(startMode("goose-module: warm start: resuming 20261206_1")).toBe("warm");
    expect(startMode("goose-module: cold start: a new session")).toBe("cold");
    expect(startMode("")).toBe("unknown");
    expect(stopLine("x\ngoose-module: turn: agent idle at its prompt\n", "turn:")).toBe(
      "turn: agent idle at its prompt",
    );
    expect(stopLine("", "turn:")).toBeNull();
  });

  it("verifiedRangeLine finds the start log's line on the Goose it runs, and not a checksum's", () => {
    const log = [
      "goose-module: goose 1.47.0 at /h/.local/bin/goose verified: SHA-256 abc, as unpacked from the tarball",
      "goose-module: goose 1.48.0: not verified with this module (verified: 1.47.0)",
    ].join("\n");
    expect(verifiedRangeLine(log)).toBe("goose 1.48.0: not verified with this module (verified: 1.47.0)");
    expect(verifiedRangeLine("goose-module: goose 1.47.0: verified with this module")).toBe(
      "goose 1.47.0: verified with this module",
    );
    expect(verifiedRangeLine("goose-module: cold start")).toBeNull();
  });
});

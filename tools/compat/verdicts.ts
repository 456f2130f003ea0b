// The pure half of `npm run compat`: its arguments, what each behaviour must
// show to pass (judged from what compat.ts observed), the version facts read
// from the module's own files, and the report as printed. No I/O here, so the
// unit tests (test/unit/tools/compat.test.ts) can feed it any observation.
import { agentSignals } from "../../support/workspace/signals.js";

export const USAGE = `Usage: npm run compat -- [--goose PATH] [--keep]

Checks the module's lifecycle against a Goose binary: applies
examples/task-template with the real Coder provider, runs the rendered start
and stop coder_scripts as the Coder agent does, in a throwaway HOME, with
real AgentAPI and that Goose talking to the local model stand-in
(support/model-stub, as openai/gpt-4o: no network, no key). It prints the
binary's --version, then one verdict per behaviour, in this order:

  1 cold start with a prompt  the task prompt is the first message of a new
                              named Goose session, delivered once, answered
  2 converse                  a chat message sent through AgentAPI is answered
  3 stop during a turn        a stop while the model is still answering: Goose
                              leaves on /exit within the stop's bound, nothing
                              is signalled, the chat is saved
  4 warm start                the same Goose session, the chat restored, the
                              interrupted turn carried on once, nothing resent
  5 crash and relaunch        Goose killed with SIGKILL: the module's
                              supervisor brings it back on the same session,
                              nothing resent, and it answers again
  6 stop                      graceful, nothing left running

Deliveries are counted in Goose's own database (sessions.db).

Options:
  --goose PATH  the Goose binary to check (default: env GOOSE_BIN, else the
                Goose test double, test/goose-double/goose)
  --keep        keep the throwaway folder (.tmp/lifecycle-*) and anything still
                running, for inspection
  -h, --help    show this help

Exit status: 0 when every behaviour passes; 1 when one fails (its reason is
on its line); 2 for a usage error.`;

export interface CompatCli {
  /** The Goose binary, resolved; undefined: GOOSE_BIN, else the double. */
  goose?: string;
  keep: boolean;
}

/** The command line, or "help"; throws an Error that says what is wrong. */
export function parseArgs(argv: string[], resolve: (p: string) => string): CompatCli | "help" {
  const cli: CompatCli = { keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    switch (flag) {
      case "-h":
      case "--help":
        return "help";
      case "--keep":
        if (eq >= 0) throw new Error("--keep takes no value");
        cli.keep = true;
        break;
      case "--goose": {
        const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
        if (value === undefined || value === "") throw new Error("--goose needs the path of a goose binary");
        cli.goose = resolve(value);
        break;
      }
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  return cli;
}

/** The behaviours, in the order they are played and printed. */
export const BEHAVIOURS = [
  "cold start with a prompt",
  "converse",
  "stop during a turn",
  "warm start",
  "crash and relaunch",
  "stop",
] as const;

export type Behaviour = (typeof BEHAVIOURS)[number];

export interface Verdict {
  behaviour: Behaviour;
  ok: boolean;
  /** One line: what was seen when it passes, what did not hold when it fails. */
  reason: string;
}

/** A condition and what to say when it does not hold. */
type Check = [holds: boolean, failure: string];

function judged(behaviour: Behaviour, checks: Check[], pass: () => string): Verdict {
  const failed = checks.filter(([holds]) => !holds).map(([, failure]) => failure);
  return { behaviour, ok: failed.length === 0, reason: failed.length === 0 ? pass() : failed.join("; ") };
}

/** A behaviour whose steps could not be completed (a timeout, a script that failed): the error's first line. */
export function incomplete(behaviour: Behaviour, error: string): Verdict {
  return { behaviour, ok: false, reason: `could not complete: ${oneLine(error.split("\n")[0] ?? "", 300)}` };
}

/** A behaviour not played because an earlier one could not complete. */
export function notRun(behaviour: Behaviour, blockedBy: Behaviour): Verdict {
  return {
    behaviour,
    ok: false,
    reason: `not run: ${BEHAVIOURS.indexOf(blockedBy) + 1} (${blockedBy}) could not complete`,
  };
}

/** Whitespace collapsed, cut to `max` characters. */
export function oneLine(text: string, max = 200): string {
  const flat = text.split(/\s+/).filter(Boolean).join(" ");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const quote = (text: string, max = 50) => JSON.stringify(oneLine(text, max));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Goose's answer to one user message: the first assistant row after it in its session. */
export interface Answer {
  text: string;
  sessionId: string;
  /**
   * The text is the model's reply: with the model stand-in, it carries the
   * reply the stand-in sent; with the double (which calls no model), it is not
   * empty. False for a stored model error, which is no answer.
   */
  fromModel: boolean;
}

function answerFailure(what: string, answer: Answer | null, sessionId: string | null): Check[] {
  return [
    [answer !== null, `${what}: Goose stored no reply`],
    [
      answer === null || answer.fromModel,
      `${what}: Goose's reply is not the model's answer: ${quote(answer?.text ?? "")}`,
    ],
    [
      answer === null || sessionId === null || answer.sessionId === sessionId,
      `${what}: answered in session ${answer?.sessionId}, not ${sessionId}`,
    ],
  ];
}

/** How many times one message the check sent (or the module's continuation) is in Goose's database. */
export interface SentCount {
  label: string;
  count: number;
}

/** Every message delivered exactly once, and no user message nobody sent. */
function sentOnce(sent: SentCount[], unexpected: string[]): Check[] {
  return [
    ...sent.map(({ label, count }): Check => [count === 1, `${label} delivered ${count} time(s), not once`]),
    [unexpected.length === 0, `${unexpected.length} user message(s) nobody sent, first ${quote(unexpected[0] ?? "")}`],
  ];
}

export type StartMode = "cold" | "warm" | "unknown";

/** The start script's own word: `goose-module: cold start:` or `warm start:`. */
export function startMode(output: string): StartMode {
  if (/goose-module: cold start:/.test(output)) return "cold";
  if (/goose-module: warm start:/.test(output)) return "warm";
  return "unknown";
}

export interface ColdStartSeen {
  mode: StartMode;
  sessionName: string;
  /** The ids of the sessions with that name. */
  sessions: string[];
  /** The first visible user message of that session. */
  firstUserText: string | null;
  prompt: string;
  promptDeliveries: number;
  answer: Answer | null;
}

export function judgeColdStart(seen: ColdStartSeen): Verdict {
  const [id] = seen.sessions;
  return judged(
    "cold start with a prompt",
    [
      [seen.mode === "cold", `the start log says ${seen.mode} start, not cold`],
      [
        seen.sessions.length === 1,
        `${seen.sessions.length} Goose sessions named ${seen.sessionName}, not one new session`,
      ],
      [
        seen.firstUserText?.includes(seen.prompt) === true,
        `the session's first message is ${quote(seen.firstUserText ?? "(none)")}, not the prompt`,
      ],
      [seen.promptDeliveries === 1, `the prompt delivered ${seen.promptDeliveries} time(s), not once`],
      ...answerFailure("the prompt", seen.answer, id ?? null),
    ],
    () =>
      `cold start; new session ${id} named ${seen.sessionName}, the task prompt its first message, delivered once; answered ${quote(seen.answer?.text ?? "")}`,
  );
}

export interface ConverseSeen {
  deliveries: number;
  answer: Answer | null;
  /** The session the cold start made. */
  sessionId: string | null;
  ms: number;
}

export function judgeConverse(seen: ConverseSeen): Verdict {
  return judged(
    "converse",
    [
      [seen.deliveries === 1, `the message delivered ${seen.deliveries} time(s), not once`],
      ...answerFailure("the message", seen.answer, seen.sessionId),
    ],
    () => `POST /message answered in ${seen.ms} ms in session ${seen.sessionId}: ${quote(seen.answer?.text ?? "")}`,
  );
}

/** What a stop script said and left. */
export interface StopSeen {
  /** The stop script's output (stdout and stderr). */
  output: string;
  /** Wall time of the stop script. */
  ms: number;
  /** The module's worst case for a stop with these settings (stop/stop-steps.ts). */
  budgetMs: number;
  /** Processes with the workspace's HOME still running once the stop had returned. */
  left: number[];
}

/** The stop log's line for `key` (`turn`, `stop finished`...), without the module's prefix. */
export function stopLine(output: string, key: string): string | null {
  const line = output.split("\n").find((l) => l.startsWith(`goose-module: ${key}`));
  return line === undefined ? null : line.slice("goose-module: ".length).trim();
}

/** The stop's turn line up to its first clause ("turn: the turn still ran after 5000 ms and was cancelled"). */
function stopNote(turn: string | null): string {
  return oneLine((turn ?? "turn: (not logged)").split(";")[0] as string, 90);
}

function gracefulStop(stop: StopSeen): Check[] {
  const signals = agentSignals(stop.output);
  return [
    [stop.output.includes("Goose exited on /exit"), "Goose did not exit on /exit (see the stop's log)"],
    [signals.length === 0, `the stop signalled AgentAPI or Goose: ${quote(signals[0] ?? "", 100)}`],
    [stop.ms <= stop.budgetMs, `the stop took ${seconds(stop.ms)}, over its ${seconds(stop.budgetMs)} bound`],
    [stop.left.length === 0, `still running after the stop: PIDs ${stop.left.join(", ")}`],
  ];
}

export interface StopDuringTurnSeen {
  stop: StopSeen;
  /** The saved chat (agentapi-state.json) has the interrupted message as a user message. */
  savedInterrupted: boolean;
  savedMessages: number;
}

export function judgeStopDuringTurn(seen: StopDuringTurnSeen): Verdict {
  const turn = stopLine(seen.stop.output, "turn:");
  return judged(
    "stop during a turn",
    [
      [
        turn !== null && !/idle/.test(turn),
        `the stop did not meet the running turn (${turn === null ? "it logged no turn step" : quote(turn, 80)})`,
      ],
      ...gracefulStop(seen.stop),
      [seen.savedInterrupted, `the saved chat (${seen.savedMessages} messages) lacks the interrupted message`],
    ],
    () =>
      `${stopNote(turn)}; Goose exited on /exit, nothing signalled, stop ${seconds(seen.stop.ms)} (bound ${seconds(seen.stop.budgetMs)}); chat saved with the interrupted message (${seen.savedMessages} messages)`,
  );
}

/** The chat AgentAPI shows after a start, against the one saved before. */
export interface RestoredSeen {
  saved: number;
  shown: number;
  /** The first `saved` messages shown are the saved ones (role and text). */
  same: boolean;
}

function restoredChat(what: string, chat: RestoredSeen): Check {
  return [
    chat.same && chat.shown >= chat.saved,
    `${what} not restored: ${chat.saved} message(s) saved, ${chat.shown} shown${chat.shown >= chat.saved ? ", not the same" : ""}`,
  ];
}

export interface WarmStartSeen {
  mode: StartMode;
  sessions: string[];
  sessionId: string | null;
  /** The launch record's interrupted_turn decision. */
  decision: { action: string; reason: string } | null;
  chat: RestoredSeen;
  continuation: Answer | null;
  /** The model was asked again with the interrupted message and the continuation in one request. */
  modelGotInterrupted: boolean;
  sent: SentCount[];
  unexpected: string[];
}

export function judgeWarmStart(seen: WarmStartSeen): Verdict {
  return judged(
    "warm start",
    [
      [seen.mode === "warm", `the start log says ${seen.mode} start, not warm`],
      [
        seen.sessions.length === 1 && seen.sessions[0] === seen.sessionId,
        `sessions with its name: ${seen.sessions.join(", ") || "none"}, not only ${seen.sessionId}`,
      ],
      restoredChat("the chat", seen.chat),
      [
        seen.decision?.action === "continue",
        `the interrupted turn was not carried on (${seen.decision ? `${seen.decision.action}: ${oneLine(seen.decision.reason, 100)}` : "no decision in the launch record"})`,
      ],
      ...(seen.decision?.action === "continue"
        ? [
            ...answerFailure("the carried-on turn", seen.continuation, seen.sessionId),
            [
              seen.modelGotInterrupted,
              "the model was not asked again with the interrupted message and the continuation",
            ] as Check,
          ]
        : []),
      ...sentOnce(seen.sent, seen.unexpected),
    ],
    () =>
      `warm start, same session ${seen.sessionId}; chat restored (${seen.chat.saved} saved, shown again); the interrupted turn carried on once and answered ${quote(seen.continuation?.text ?? "")}; every message delivered once`,
  );
}

export interface CrashSeen {
  /** What was killed with SIGKILL: "Goose" or "AgentAPI". */
  killed: string;
  /** The killed process is gone. */
  killedGone: boolean;
  /** From the SIGKILL to a new AgentAPI answering on the port. */
  backMs: number;
  mode: string | null;
  sessions: string[];
  sessionId: string | null;
  /** The supervisor's log says it restarted AgentAPI after an exit without a stop. */
  supervisorRestarted: boolean;
  /** The supervisor had saved the chat up to the last turn before the crash. */
  autosaved: boolean;
  chat: RestoredSeen;
  /** The answer to a message sent after the relaunch. */
  after: Answer | null;
  sent: SentCount[];
  unexpected: string[];
}

export function judgeCrash(seen: CrashSeen): Verdict {
  return judged(
    "crash and relaunch",
    [
      [seen.killedGone, `${seen.killed} still ran after SIGKILL`],
      [seen.supervisorRestarted, "the supervisor's log has no restart after an exit without a stop"],
      [seen.mode === "warm", `the relaunch was ${seen.mode ?? "not recorded"}, not warm`],
      [
        seen.sessions.length === 1 && seen.sessions[0] === seen.sessionId,
        `sessions with its name: ${seen.sessions.join(", ") || "none"}, not only ${seen.sessionId}`,
      ],
      [seen.autosaved, "the supervisor had not saved the chat after the last turn before the crash"],
      restoredChat("the chat", seen.chat),
      ...answerFailure("a message after the relaunch", seen.after, seen.sessionId),
      ...sentOnce(seen.sent, seen.unexpected),
    ],
    () =>
      `kill -9 ${seen.killed}: the supervisor relaunched it warm in ${seconds(seen.backMs)}, same session ${seen.sessionId}, chat restored (${seen.chat.saved} messages), nothing resent; it answered again ${quote(seen.after?.text ?? "")}`,
  );
}

export interface FinalStopSeen {
  stop: StopSeen;
  sent: SentCount[];
  unexpected: string[];
}

export function judgeStop(seen: FinalStopSeen): Verdict {
  return judged("stop", [...gracefulStop(seen.stop), ...sentOnce(seen.sent, seen.unexpected)], () => {
    const turn = stopLine(seen.stop.output, "turn:");
    return `${stopNote(turn)}; Goose exited on /exit, nothing signalled, stop ${seconds(seen.stop.ms)} (bound ${seconds(seen.stop.budgetMs)}); nothing left running; over the whole run every message was delivered once`;
  });
}

/** The release number in `goose --version`'s output (" 1.47.0", "goose 1.47.0"); null when there is none. */
export function versionOf(output: string): string | null {
  return /\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(output)?.[1] ?? null;
}

/** The Goose release the module installs and is tested with: `goose_version` in main.tf's tested_versions. */
export function testedGooseVersion(mainTf: string): string | null {
  const block = /^ {2}tested_versions = \{\n([\s\S]*?)^ {2}\}/m.exec(mainTf)?.[1] ?? "";
  return /^\s*goose_version\s*=\s*"v?([^"]+)"/m.exec(block)?.[1] ?? null;
}

/** A variable's numeric default in variables.tf; null when it has none. */
export function variableDefault(variablesTf: string, name: string): number | null {
  const start = variablesTf.indexOf(`variable "${name}" {`);
  if (start < 0) return null;
  const next = variablesTf.indexOf('\nvariable "', start + 1);
  const block = variablesTf.slice(start, next < 0 ? undefined : next);
  const value = /^ {2}default\s*=\s*(\d+(?:\.\d+)?)\s*$/m.exec(block)?.[1];
  return value === undefined ? null : Number(value);
}

/**
 * The start log's line on the Goose it runs: its version and whether the
 * module was verified with it (describeGooseVersion, src/goose/versions.ts).
 * Null for a module that says nothing of it.
 */
export function verifiedRangeLine(startOutput: string): string | null {
  const line = startOutput
    .split("\n")
    .find((l) => /^goose-module: goose \S+: (?:not )?verified with this module/.test(l));
  return line === undefined ? null : line.slice("goose-module:".length).trim();
}

export interface CompatReport {
  goose: { kind: "double" | "real"; path: string; versionOutput: string };
  agentapiVersion: string;
  /** main.tf's tested Goose release. */
  tested: string | null;
  /** The start log's line on the Goose it runs and whether it is verified, if the module writes one. */
  rangeLine: string | null;
  /** The model Goose talked to, said in a few words. */
  model: string;
  verdicts: Verdict[];
  runDir: string;
  kept: boolean;
  totalMs: number;
}

export function verdictLine(v: Verdict): string {
  return `${v.ok ? "PASS" : "FAIL"} ${BEHAVIOURS.indexOf(v.behaviour) + 1} ${v.behaviour}: ${v.reason}`;
}

export function passed(report: CompatReport): boolean {
  return report.verdicts.length === BEHAVIOURS.length && report.verdicts.every((v) => v.ok);
}

/** The report as printed: the binary and its version, then one line per behaviour, then the result. */
export function formatReport(report: CompatReport, relative: (p: string) => string): string {
  const version = versionOf(report.goose.versionOutput);
  const what = report.goose.kind === "double" ? "the Goose test double" : relative(report.goose.path);
  const tested =
    report.tested === null
      ? "main.tf names no tested release"
      : version === report.tested
        ? `the release the module is tested with (main.tf tested_versions: ${report.tested})`
        : `not the release the module is tested with (${report.tested}, main.tf tested_versions)`;
  const failed = report.verdicts.filter((v) => !v.ok).length;
  return [
    "",
    "==== Goose compatibility check (npm run compat) ====",
    `goose     ${what}: --version ${JSON.stringify(report.goose.versionOutput.trim())} -> ${version ?? "no release number"}`,
    `          ${tested}`,
    `          start log: ${report.rangeLine ?? "the module's start log does not say whether this Goose is verified"}`,
    `agentapi  ${report.agentapiVersion}; model: ${report.model}`,
    `run       ${relative(report.runDir)}${report.kept ? " (kept)" : " (removed)"}, ${seconds(report.totalMs)}`,
    "",
    ...report.verdicts.map(verdictLine),
    passed(report)
      ? `RESULT: PASS (${BEHAVIOURS.length}/${BEHAVIOURS.length}) goose ${version ?? report.goose.versionOutput.trim()}`
      : `RESULT: FAIL (${failed} of ${BEHAVIOURS.length} failed) goose ${version ?? report.goose.versionOutput.trim()}`,
  ].join("\n");
}

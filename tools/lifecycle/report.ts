// The lifecycle's report: what each start, conversation and stop left behind,
// and the resume guarantees judged from it.
import path from "node:path";
import { agentSignals, repoRoot, type SnapshotPost, SUPERVISOR_FALLBACK } from "../../support/workspace/index.js";

export type PhaseName = "render" | "start" | "converse" | "stop" | "restart";

/** A plain workspace (the default) or a Coder task (--task). */
export type LifecycleMode = "plain" | "task";

export interface CycleSnapshot extends SnapshotPost {
  /** Which stop sent it (0 = the stop after the first start). */
  stop: number;
}

export interface CycleRecord {
  /** 0 = the first (cold) start, 1..N = restarts. */
  index: number;
  mode: "cold" | "warm" | "unknown";
  /** The Goose session id `goose session list` shows for the session name. */
  sessionId: string | null;
  /** How many Goose sessions carry the session name (a second one would be a lost resume). */
  sessionsWithName: number;
  /** /messages once the chat is stable after this start (for a restart: the restored history). */
  messagesAfterStart: number;
  /** /messages just before this cycle's stop. */
  messagesBeforeStop: number;
  /** Durations in ms: start (or restart), converse, stop. */
  phases: Partial<Record<PhaseName, number>>;
  startScriptMs: number;
  stopScriptMs: number;
  /** The snapshot the stop posted, if any. */
  snapshot: CycleSnapshot | null;
  /** Lines of the start and stop scripts' output that matter for the report. */
  startLines: string[];
  stopLines: string[];
}

export interface Check {
  name: string;
  ok: boolean;
  /** True when the check could not be made (a real goose logs no deliveries); ok stays true. */
  skipped?: boolean;
  detail: string;
}

export interface LifecycleReport {
  ok: boolean;
  mode: LifecycleMode;
  /** The example applied, relative to the repository. */
  template: string;
  checks: Check[];
  runDir: string;
  home: string;
  kept: boolean;
  port: number;
  coderUrl: string;
  workspaceId: string;
  /** The task's ID (a task), or the one a task would have had (plain: never sent anywhere). */
  taskId: string;
  /** The task prompt, or the plain workspace's first message. */
  prompt: string;
  goose: { kind: "double" | "real"; path: string; version: string };
  agentapi: { path: string; version: string };
  sessionName: string;
  cycles: CycleRecord[];
  /** Goose provider and model the template was applied with. */
  provider: string;
  model: string;
  /** The local model stub a real goose talked to (null: the double, or a real provider). */
  modelStub: { url: string; requests: number } | null;
  /** How many user-visible user messages in Goose's database carry the prompt (or the first message). */
  promptDeliveries: number;
  snapshots: CycleSnapshot[];
  /** render is once; the others are per cycle, see cycles[].phases. */
  renderMs: number;
  totalMs: number;
  /** Processes with this HOME still alive after the last stop script (before any clean-up). */
  leftAfterStop: number[];
}

/** The resume guarantees, each with a one-line verdict. */
export function judge(report: LifecycleReport): Check[] {
  const { cycles } = report;
  const checks: Check[] = [];
  const ids = cycles.map((c) => c.sessionId);
  const sameId = ids[0] !== null && ids.every((id) => id === ids[0]);
  checks.push({
    name: "same Goose session resumed on every restart",
    ok: sameId && cycles.every((c, i) => c.mode === (i === 0 ? "cold" : "warm") && c.sessionsWithName === 1),
    skipped: cycles.length < 2,
    detail:
      `modes ${cycles.map((c) => c.mode).join(", ")}; session ids ${ids.map((id) => id ?? "none").join(", ")}` +
      (cycles.some((c) => c.sessionsWithName > 1)
        ? `; sessions named ${report.sessionName}: ${cycles.map((c) => c.sessionsWithName).join(", ")}`
        : ""),
  });
  const restored = cycles.slice(1).map((c, i) => ({
    before: (cycles[i] as CycleRecord).messagesBeforeStop,
    after: c.messagesAfterStart,
    grown: c.messagesBeforeStop,
  }));
  checks.push({
    name: "chat history restored after every restart, and only grows",
    ok: restored.every((r) => r.after === r.before && r.grown > r.after) && (cycles[0]?.messagesBeforeStop ?? 0) > 0,
    skipped: restored.length === 0,
    detail:
      restored.length === 0
        ? "no restart"
        : restored
            .map((r, i) => `#${i + 1}: ${r.before} before stop -> ${r.after} after restart -> ${r.grown}`)
            .join("; "),
  });
  const task = report.mode === "task";
  checks.push({
    name: task ? "task prompt delivered exactly once" : "first message delivered exactly once, nothing re-sent",
    ok: report.promptDeliveries === 1,
    detail: `delivered ${report.promptDeliveries} time(s) (user messages in Goose's database)`,
  });
  const snapOk = task
    ? cycles.every(
        (c) =>
          c.snapshot &&
          c.snapshot.messages > 0 &&
          c.snapshot.tokenMatched &&
          c.snapshot.taskId === report.taskId &&
          c.snapshot.format === "agentapi",
      )
    : cycles.every(
        (c) =>
          !c.snapshot && c.stopLines.some((l) => l.includes("snapshot skipped: this workspace is not a Coder task")),
      );
  checks.push({
    name: task ? "task log snapshot posted on every stop" : "no task log snapshot posted, and every stop says so",
    ok: snapOk,
    detail: cycles
      .map((c) =>
        c.snapshot
          ? `#${c.index}: ${c.snapshot.messages} msg, ${c.snapshot.bytes} B${c.snapshot.tokenMatched ? "" : ", wrong token"}`
          : `#${c.index}: none`,
      )
      .join("; "),
  });
  const graceful = cycles.map(
    (c) =>
      c.stopLines.some((l) => l.includes("Goose exited on /exit")) && agentSignals(c.stopLines.join("\n")).length === 0,
  );
  // The supervisor's stand-down fallback is no signal to Goose or AgentAPI, but it is said.
  const supervisorKilled = cycles.map((c) => c.stopLines.some((l) => SUPERVISOR_FALLBACK.test(l)));
  checks.push({
    name: "every stop graceful: Goose exited by itself on /exit, neither it nor AgentAPI signalled",
    ok: graceful.every(Boolean),
    detail: cycles
      .map(
        (c, i) =>
          `#${c.index}: ${graceful[i] ? "/exit" : "fallback (see the stop lines)"}${supervisorKilled[i] ? " (the supervisor was SIGKILLed after its stand-down bound)" : ""}`,
      )
      .join("; "),
  });
  checks.push({
    name: "nothing left running after the stop script",
    ok: report.leftAfterStop.length === 0,
    detail:
      report.leftAfterStop.length === 0
        ? "no process with the workspace's HOME"
        : `PIDs ${report.leftAfterStop.join(", ")}`,
  });
  return checks;
}

const ms = (n: number | undefined) => (n === undefined ? "-" : `${n} ms`);

/** The report as the CLI prints it: what survived each restart, the phase times, then one verdict line per check. */
export function formatReport(report: LifecycleReport): string {
  const out: string[] = [];
  const rel = (p: string) => path.relative(repoRoot, p) || ".";
  const [first] = report.cycles;
  const ids = report.cycles.map((c) => c.sessionId);
  const sameId = ids[0] !== null && ids.every((id) => id === ids[0]);
  out.push("");
  out.push("==== Goose module lifecycle report ====");
  out.push(
    `mode            ${report.mode === "task" ? "task (--task): the task prompt on the first start, a log snapshot on every stop" : "plain workspace (the default): the first message typed into the chat"}`,
  );
  out.push(`template        ${report.template} (terraform apply, real coder provider)`);
  out.push(
    `agent           ${report.goose.kind === "double" ? "Goose test double" : "goose"} ${report.goose.version} in AgentAPI ${report.agentapi.version}`,
  );
  out.push(
    `model           ${report.provider}/${report.model}` +
      (report.modelStub
        ? ` via the local model stub (${report.modelStub.requests} request(s))`
        : report.goose.kind === "double"
          ? " (the double never calls it)"
          : " (real provider)"),
  );
  out.push(`workspace home  ${rel(report.home)}${report.kept ? " (kept)" : " (removed)"}`);
  out.push(
    `session         ${report.sessionName}, Goose id ${first?.sessionId ?? "none"}; same on every restart: ${sameId ? "yes" : "no"}`,
  );
  out.push(`history         ${first ? `${first.messagesBeforeStop} message(s) before the first stop` : "-"}`);
  for (const c of report.cycles.slice(1)) {
    const before = report.cycles[c.index - 1]?.messagesBeforeStop ?? 0;
    out.push(
      `  restart #${c.index}     ${c.mode} start, session ${c.sessionId ?? "none"}: ${before} before stop -> ${c.messagesAfterStart} after restart -> ${c.messagesBeforeStop} after one more message`,
    );
  }
  out.push(
    `${report.mode === "task" ? "prompt         " : "first message  "} delivered ${report.promptDeliveries} time(s) in total (user messages in Goose's database)`,
  );
  for (const c of report.cycles) {
    out.push(
      `snapshot #${c.index}     ${c.snapshot ? `posted on stop: ${c.snapshot.messages} message(s), ${c.snapshot.bytes} bytes, answered ${c.snapshot.answered}` : report.mode === "plain" ? "not posted (not a task)" : "not posted"}`,
    );
  }
  out.push(`phases          render ${ms(report.renderMs)}`);
  for (const c of report.cycles) {
    const label = c.index === 0 ? "start #0   " : `restart #${c.index} `;
    const startMs = c.index === 0 ? c.phases.start : c.phases.restart;
    out.push(
      `  ${label}    ${c.index === 0 ? "start" : "restart"} ${ms(startMs)} (script ${ms(c.startScriptMs)}), converse ${ms(c.phases.converse)}, stop ${ms(c.phases.stop)}`,
    );
  }
  out.push(`total           ${ms(report.totalMs)}`);
  out.push("");
  for (const check of report.checks)
    out.push(`${check.skipped ? "SKIP" : check.ok ? "PASS" : "FAIL"} ${check.name} (${check.detail})`);
  const failed = report.checks.filter((c) => !c.ok);
  out.push(failed.length === 0 ? "RESULT: PASS" : `RESULT: FAIL (${failed.map((c) => c.name).join("; ")})`);
  if (report.kept) {
    out.push("");
    out.push(`Kept ${rel(report.runDir)}: the rendered scripts, run-start.sh / run-stop.sh to run them again, and`);
    out.push(`the module's logs in ${rel(path.join(report.home, ".coder-modules/coder/goose/logs"))}.`);
  }
  return out.join("\n");
}

// `npm run compat`: plays the behaviours a platform team relies on against one
// Goose binary, in one throwaway workspace set up the way `npm run lifecycle
// -- --task` sets it up (examples/task-template applied with the real coder
// provider, the rendered coder_scripts run as the Coder agent runs them, real
// AgentAPI, the local model stand-in for a real Goose), and returns what each
// showed; verdicts.ts judges it. A behaviour whose steps cannot be completed
// fails with the reason, and the ones after it are not played: they would
// start from a state nobody meant.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { CONTINUATION_TEXT } from "../../src/goose/interrupted-turn.js";
import { stopBounds, stopBudgetMs } from "../../src/stop/stop-steps.js";
import {
  type ChatMessage,
  childPids,
  commandLine,
  type GooseMessage,
  gooseMessages,
  isRunning,
  repoRoot,
  waitFor,
} from "../../support/workspace/index.js";
import {
  checkBinaries,
  createRunDir,
  planRun,
  type Run,
  removeRunDir,
  renderTemplate,
  step,
  type Template,
  withWorkspace,
} from "../lifecycle/lifecycle.js";
import {
  type Answer,
  BEHAVIOURS,
  type Behaviour,
  type CompatReport,
  incomplete,
  judgeColdStart,
  judgeConverse,
  judgeCrash,
  judgeStop,
  judgeStopDuringTurn,
  judgeWarmStart,
  notRun,
  type RestoredSeen,
  type SentCount,
  type StopSeen,
  startMode,
  testedGooseVersion,
  type Verdict,
  variableDefault,
  verifiedRangeLine,
} from "./verdicts.js";

export interface CompatOptions {
  /** A real goose binary; default: env GOOSE_BIN, else the Goose test double. */
  goose?: string;
  keep?: boolean;
  logger?: (line: string) => void;
  /** Called once the throwaway folder exists (for a Ctrl-C handler: cleanupRun). */
  onRunDir?: (run: { runDir: string; home: string }) => void;
}

const CONVERSE = "Compat check: which folder are you working in? Answer in one short sentence.";
const SLOW = "Compat check: a long piece of work, during which the workspace stops. Reply in one short sentence.";
const AFTER_CRASH = "Compat check: are you back after the crash? Answer in one short sentence.";

/**
 * How long the slow turn's answer takes: longer than any stop may take, so the
 * stop always meets the turn running, and the stand-in drops the reply when
 * Goose leaves. Normal turns answer at once (the double: its default 200 ms).
 */
const SLOW_TURN_MS = 600_000;
const NORMAL_TURN_MS = { double: 200, stub: 0 };

/** What the behaviours share as the run goes on. */
interface Context {
  run: Run;
  template: Template;
  /** Makes Goose's next turns take `ms`: the model stand-in's delay, or the double's turn time. */
  setTurnMs: (ms: number) => Promise<void>;
  /** The messages the check sent, in order, with a label for the verdicts. */
  sent: Array<{ label: string; text: string }>;
  sessionId: string | null;
  firstStartOutput: string;
  /** The chat saved by the stop during the turn. */
  savedAtStop: SavedMessage[];
  stopBudgetMs: number;
}

interface SavedMessage {
  role: string;
  message: string;
}

export async function runCompat(options: CompatOptions = {}): Promise<CompatReport> {
  const began = Date.now();
  const plan = await step("setup: find the tools", async () =>
    planRun({ task: true, restarts: 0, keep: options.keep, goose: options.goose, logger: options.logger }, began),
  );
  const dirs = await step("setup: create the throwaway home", createRunDir);
  options.onRunDir?.({ runDir: dirs.runDir, home: dirs.home });
  const report = await withWorkspace(plan, dirs, playCompat).finally(() => removeRunDir(plan, dirs));
  report.totalMs = Date.now() - began;
  return report;
}

async function playCompat(run: Run): Promise<CompatReport> {
  const versions = await step("check the binaries", () => checkBinaries(run));
  // The double reads its turn time from a file named in its environment, which
  // must be there before the first start launches it.
  const setTurnMs = await step("set up the slow turn", () => turnControl(run));
  const template = await step("render: terraform apply examples/task-template", () => renderTemplate(run));
  const ctx: Context = {
    run,
    template,
    setTurnMs,
    sent: [{ label: "the task prompt", text: run.prompt }],
    sessionId: null,
    firstStartOutput: "",
    savedAtStop: [],
    stopBudgetMs: await stopBudget(),
  };
  const plays: Record<Behaviour, (ctx: Context) => Promise<Verdict>> = {
    "cold start with a prompt": coldStart,
    converse,
    "stop during a turn": stopDuringTurn,
    "warm start": warmStart,
    "crash and relaunch": crashAndRelaunch,
    stop: finalStop,
  };
  const verdicts: Verdict[] = [];
  let blocked: Behaviour | null = null;
  for (const behaviour of BEHAVIOURS) {
    if (blocked) {
      verdicts.push(notRun(behaviour, blocked));
      continue;
    }
    run.say(`${BEHAVIOURS.indexOf(behaviour) + 1} ${behaviour}`);
    try {
      verdicts.push(await plays[behaviour](ctx));
    } catch (error) {
      verdicts.push(incomplete(behaviour, (error as Error)?.message ?? String(error)));
      blocked = behaviour;
    }
    const last = verdicts[verdicts.length - 1] as Verdict;
    run.say(`${BEHAVIOURS.indexOf(behaviour) + 1} ${behaviour}: ${last.ok ? "PASS" : "FAIL"}`);
  }
  const stub = run.ws.modelStub;
  return {
    goose: { kind: run.goose.real ? "real" : "double", path: run.goose.bin, versionOutput: versions.goose },
    agentapiVersion: versions.agentapi,
    tested: testedGooseVersion(await readFile(path.join(repoRoot, "main.tf"), "utf8")),
    rangeLine: verifiedRangeLine(ctx.firstStartOutput),
    model: stub
      ? `${run.provider}/${run.model} via the local model stand-in (support/model-stub), ${(await stub.requests()).length} request(s)`
      : "none (the double calls no model)",
    verdicts,
    runDir: run.runDir,
    kept: run.keep,
    totalMs: 0,
  };
}

/**
 * The stop's worst case with the template's settings: examples/task-template
 * leaves stop_turn_wait_seconds and stop_sigterm_wait_seconds at the module's
 * defaults, read here from variables.tf so the bound follows them.
 */
async function stopBudget(): Promise<number> {
  const variables = await readFile(path.join(repoRoot, "variables.tf"), "utf8");
  const turn = variableDefault(variables, "stop_turn_wait_seconds");
  const term = variableDefault(variables, "stop_sigterm_wait_seconds");
  if (turn === null || term === null)
    throw new Error("variables.tf has no numeric default for stop_turn_wait_seconds or stop_sigterm_wait_seconds");
  return stopBudgetMs(stopBounds({ turnMs: turn * 1000, termMs: term * 1000 }));
}

/** The model stand-in's delay for a real Goose; the double's turn time file (GOOSE_DOUBLE_TURN_MS_FILE) otherwise. */
async function turnControl(run: Run): Promise<(ms: number) => Promise<void>> {
  const stub = run.ws.modelStub;
  if (stub) {
    stub.setDelay(NORMAL_TURN_MS.stub);
    return async (ms) => stub.setDelay(ms);
  }
  if (run.goose.real) throw new Error("a real goose without the model stand-in: the check cannot make a turn slow");
  const file = path.join(run.home, "goose-double-turn-ms");
  await writeFile(file, `${NORMAL_TURN_MS.double}\n`);
  run.ws.setEnv({ GOOSE_DOUBLE_TURN_MS_FILE: file });
  return (ms) => writeFile(file, `${ms}\n`);
}

// ---- Goose's database

/** How many times each message sent so far (by the check, or the module's continuation) is in Goose's database, and what else is. */
async function sentCounts(ctx: Context): Promise<{ sent: SentCount[]; unexpected: string[] }> {
  const visible = (await gooseMessages(ctx.run.ws.gooseDb, "user")).filter((m) => m.userVisible);
  return {
    sent: ctx.sent.map(({ label, text }) => ({ label, count: visible.filter((m) => m.text.includes(text)).length })),
    // A tool's result is a visible user row without text; only text counts as something sent.
    unexpected: visible
      .filter((m) => m.text.trim() !== "" && !ctx.sent.some(({ text }) => m.text.includes(text)))
      .map((m) => m.text),
  };
}

/** Goose's answer to the last user message carrying `text`: the first assistant row after it in its session. */
async function answerTo(run: Run, text: string): Promise<Answer | null> {
  const rows = await gooseMessages(run.ws.gooseDb);
  let at = rows.length - 1;
  while (at >= 0 && !(rows[at]?.role === "user" && rows[at]?.userVisible && rows[at]?.text.includes(text))) at--;
  if (at < 0) return null;
  const asked = rows[at] as GooseMessage;
  const reply = rows.slice(at + 1).find((m) => m.sessionId === asked.sessionId && m.role === "assistant");
  if (!reply) return null;
  return { text: reply.text, sessionId: reply.sessionId, fromModel: await fromModel(run, reply.text) };
}

/** The text is a reply the model stand-in sent (the double calls no model: any text is its answer). */
async function fromModel(run: Run, text: string): Promise<boolean> {
  if (text.trim() === "") return false;
  const stub = run.ws.modelStub;
  if (!stub) return true;
  return (await stub.requests()).some((r) => text.includes(r.reply.trim()));
}

/** Whether one request to the model carried all these texts in its user messages. */
async function modelAsked(run: Run, texts: string[]): Promise<boolean> {
  const stub = run.ws.modelStub;
  const asked = stub
    ? (await stub.requests()).map((r) =>
        r.messages
          .filter((m) => m.role === "user")
          .map((m) => m.text)
          .join("\n"),
      )
    : (await run.ws.events()).filter((e) => e.event === "model_request").map((e) => String(e.text ?? ""));
  return asked.some((request) => texts.every((text) => request.includes(text)));
}

async function firstUserText(run: Run, sessionId: string | undefined): Promise<string | null> {
  if (sessionId === undefined) return null;
  const first = (await gooseMessages(run.ws.gooseDb, "user")).find((m) => m.sessionId === sessionId && m.userVisible);
  return first?.text ?? null;
}

// ---- AgentAPI, the chat, the processes

const flat = (text: string) => text.split(/\s+/).filter(Boolean).join(" ");

async function savedChat(run: Run): Promise<SavedMessage[]> {
  const text = await run.ws.readModuleFile("agentapi-state.json");
  if (text === null) return [];
  return ((JSON.parse(text) as { messages?: SavedMessage[] }).messages ?? []).map((m) => ({
    role: m.role,
    message: m.message,
  }));
}

function sameChat(shown: ChatMessage[], saved: SavedMessage[]): boolean {
  return saved.every((m, i) => shown[i]?.role === m.role && flat(shown[i]?.content ?? "") === flat(m.message));
}

/** The chat shown after a start, once AgentAPI has loaded the saved one, against it. */
async function restored(run: Run, saved: SavedMessage[]): Promise<RestoredSeen> {
  // AgentAPI loads the saved chat once Goose's prompt shows, which the callers
  // have waited for; a shorter chat is the verdict's business, not an error.
  const shown = await waitFor(
    `the restored chat (${saved.length} messages)`,
    async () => {
      const now = await run.ws.messages();
      return now.length >= saved.length ? now : undefined;
    },
    10_000,
  ).catch(() => run.ws.messages());
  return { saved: saved.length, shown: shown.length, same: sameChat(shown, saved) };
}

async function launchRecord(
  run: Run,
): Promise<{ mode?: string; interrupted_turn?: { action: string; reason: string } }> {
  return JSON.parse((await run.ws.readModuleFile("agentapi-launch.json")) ?? "{}");
}

async function agentapiPids(run: Run): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await run.ws.processes())
    if (path.basename((await commandLine(pid))[0] ?? "") === "agentapi") found.push(pid);
  return found;
}

/** Goose under AgentAPI: its descendant run as `goose` (a real one, or the double's `python3 .../goose`). */
async function gooseUnder(agentapi: number): Promise<number | null> {
  const queue = await childPids(agentapi);
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    const argv = await commandLine(pid);
    if (argv.slice(0, 2).some((arg) => path.basename(arg) === "goose")) return pid;
    queue.push(...(await childPids(pid)));
  }
  return null;
}

/**
 * Runs a rendered script as the Coder agent does. A failure says why in one
 * line: the module's own `error:` line, which the end of a long output (an
 * AgentAPI log quoted after it) would not show.
 */
async function runScript(run: Run, template: Template, which: "start" | "stop") {
  const result = await (which === "start"
    ? run.ws.runStart(template, undefined, 240_000)
    : run.ws.runScript(template.stop, undefined, 240_000));
  if (result.code === 0) return result;
  const said = `${result.stdout}\n${result.stderr}`.split("\n").find((l) => l.startsWith("goose-module: error: "));
  throw new Error(
    `the ${which} script exited ${result.code}${said ? `: ${said.slice("goose-module: error: ".length)}` : ""}${run.keep ? "" : " (--keep keeps its logs)"}`,
  );
}

/** Runs the stop script, then waits for AgentAPI to stop answering and for the workspace's processes to end. */
async function stopObserved(ctx: Context): Promise<StopSeen> {
  const { run } = ctx;
  const t0 = Date.now();
  const script = await runScript(run, ctx.template, "stop");
  const ms = Date.now() - t0;
  // The stop returns once AgentAPI has exited; what is still there after these
  // bounds is left running, and the verdict names it.
  await waitFor("AgentAPI to stop answering", async () => (await run.ws.status()) === null, 10_000).catch(
    () => undefined,
  );
  const left = await waitFor("no process left", async () => (await run.ws.processes()).length === 0, 20_000)
    .then(() => [])
    .catch(() => run.ws.processes());
  run.say(`stop script exited 0 in ${ms} ms${left.length > 0 ? `; still running: ${left.join(", ")}` : ""}`);
  return { output: script.stdout + script.stderr, ms, budgetMs: ctx.stopBudgetMs, left };
}

// ---- The behaviours

async function coldStart(ctx: Context): Promise<Verdict> {
  const { run } = ctx;
  const script = await runScript(run, ctx.template, "start");
  ctx.firstStartOutput = script.stdout + script.stderr;
  run.say(`start script exited 0 in ${script.ms} ms; waiting for the prompt's answer`);
  await run.ws.agentapi.waitFor("Goose's reply to the task prompt (in its database)", async () => {
    return (await run.ws.replies()) >= 1;
  });
  await run.ws.agentapi.waitFor(
    "the prompt's reply in /messages",
    async (status) =>
      status === "stable" && (await run.ws.messages()).some((m) => m.role === "agent" && m.content.trim() !== ""),
  );
  const sessions = await run.ws.sessionsNamed(ctx.template.sessionName);
  ctx.sessionId = sessions[0] ?? null;
  return judgeColdStart({
    mode: startMode(ctx.firstStartOutput),
    sessionName: ctx.template.sessionName,
    sessions,
    firstUserText: await firstUserText(run, sessions[0]),
    prompt: run.prompt,
    promptDeliveries: await run.ws.deliveries((text) => text.includes(run.prompt)),
    answer: await answerTo(run, run.prompt),
  });
}

async function converse(ctx: Context): Promise<Verdict> {
  const { run } = ctx;
  const t0 = Date.now();
  ctx.sent.push({ label: "the chat message", text: CONVERSE });
  await run.ws.send(CONVERSE);
  return judgeConverse({
    deliveries: await run.ws.deliveries((text) => text.includes(CONVERSE)),
    answer: await answerTo(run, CONVERSE),
    sessionId: ctx.sessionId,
    ms: Date.now() - t0,
  });
}

async function stopDuringTurn(ctx: Context): Promise<Verdict> {
  const { run } = ctx;
  await ctx.setTurnMs(SLOW_TURN_MS);
  await run.ws.waitStable();
  ctx.sent.push({ label: "the interrupted message", text: SLOW });
  await run.ws.agentapi.post(SLOW);
  const stub = run.ws.modelStub;
  await run.ws.agentapi.waitFor(
    "the slow message stored by Goose, its turn running",
    async (status) =>
      status === "running" &&
      (await run.ws.deliveries((text) => text.includes(SLOW))) === 1 &&
      // With the stand-in, the turn is known to wait on the model's answer.
      (!stub ||
        (await stub.requests()).some((r) => r.messages.some((m) => m.role === "user" && m.text.includes(SLOW)))),
  );
  run.say("the turn is running; running the stop script");
  const stop = await stopObserved(ctx);
  ctx.savedAtStop = await savedChat(run);
  return judgeStopDuringTurn({
    stop,
    savedInterrupted: ctx.savedAtStop.some((m) => m.role === "user" && flat(m.message).includes(flat(SLOW))),
    savedMessages: ctx.savedAtStop.length,
  });
}

async function warmStart(ctx: Context): Promise<Verdict> {
  const { run } = ctx;
  await ctx.setTurnMs(run.ws.modelStub ? NORMAL_TURN_MS.stub : NORMAL_TURN_MS.double);
  // The module's continuation is due now: counted with what the check sent.
  ctx.sent.push({ label: "the continuation", text: CONTINUATION_TEXT });
  const script = await runScript(run, ctx.template, "start");
  const decision = (await launchRecord(run)).interrupted_turn ?? null;
  run.say(`start script exited 0 in ${script.ms} ms; interrupted turn: ${decision?.action ?? "no decision recorded"}`);
  if (decision?.action === "continue")
    await run.ws.agentapi.waitFor(
      "Goose's answer to the continuation (in its database)",
      async () => (await answerTo(run, CONTINUATION_TEXT)) !== null,
    );
  await run.ws.waitStable();
  return judgeWarmStart({
    mode: startMode(script.stdout + script.stderr),
    sessions: await run.ws.sessionsNamed(ctx.template.sessionName),
    sessionId: ctx.sessionId,
    decision,
    chat: await restored(run, ctx.savedAtStop),
    continuation: await answerTo(run, CONTINUATION_TEXT),
    modelGotInterrupted: await modelAsked(run, [SLOW, CONTINUATION_TEXT]),
    ...(await sentCounts(ctx)),
  });
}

async function crashAndRelaunch(ctx: Context): Promise<Verdict> {
  const { run } = ctx;
  await run.ws.waitStable();
  const shown = await run.ws.messages();
  // The supervisor saves the chat when a turn ends; a crash after that loses nothing shown.
  const autosaved = await waitFor(
    "the chat autosaved by the supervisor",
    async () => {
      const saved = await savedChat(run);
      return saved.length === shown.length && sameChat(shown, saved);
    },
    30_000,
  ).catch(() => false);
  const [agentapi] = await agentapiPids(run);
  if (agentapi === undefined) throw new Error("no AgentAPI runs before the crash");
  const goose = await gooseUnder(agentapi);
  if (goose === null) throw new Error(`no goose process under AgentAPI (PID ${agentapi})`);
  run.say(`kill -9 Goose (PID ${goose}) under AgentAPI (PID ${agentapi})`);
  const t0 = Date.now();
  process.kill(goose, "SIGKILL");
  // Not AgentAPI's own wait, which gives up once AgentAPI is silent for a few
  // seconds: here it is down until the supervisor brings it back.
  await waitFor(
    "a new AgentAPI answering on the port",
    async () => {
      const [now] = await agentapiPids(run);
      return now !== undefined && now !== agentapi && (await run.ws.status()) !== null;
    },
    run.agentTimeoutMs,
  );
  const backMs = Date.now() - t0;
  await run.ws.waitStable();
  run.say(`relaunched in ${backMs} ms`);
  const record = await launchRecord(run);
  const supervisorLog = await readFile(path.join(run.ws.moduleDir, "logs", "supervisor.log"), "utf8").catch(() => "");
  const chat = await restored(
    run,
    shown.map((m) => ({ role: m.role, message: m.content })),
  );
  const counts = await sentCounts(ctx);
  ctx.sent.push({ label: "the message after the relaunch", text: AFTER_CRASH });
  await run.ws.send(AFTER_CRASH);
  return judgeCrash({
    killed: "Goose",
    killedGone: !(await isRunning(goose)),
    backMs,
    mode: record.mode ?? null,
    sessions: await run.ws.sessionsNamed(ctx.template.sessionName),
    sessionId: ctx.sessionId,
    supervisorRestarted: /exited after \d+ s without a stop; restart \d+/.test(supervisorLog),
    autosaved: Boolean(autosaved),
    chat,
    after: await answerTo(run, AFTER_CRASH),
    // Counted before the message after the relaunch: the relaunch itself sends nothing.
    ...counts,
  });
}

async function finalStop(ctx: Context): Promise<Verdict> {
  await ctx.run.ws.waitStable();
  const stop = await stopObserved(ctx);
  return judgeStop({ stop, ...(await sentCounts(ctx)) });
}

// Plays a Coder workspace's life on this machine with the workspace simulator
// (support/workspace): `terraform apply` of examples/workspace-template (a
// plain workspace, the default) or examples/task-template (a task) with the
// real coder provider, the rendered start and stop coder_scripts run as the
// Coder agent runs them, real AgentAPI, the Goose test double (or a real goose:
// --goose / GOOSE_BIN, by default talking to the local model stub), and the
// stand-in for the Coder deployment that receives the task log snapshot.
// Deliveries and replies are counted in Goose's own database, the same way for
// both. Returns a structured report; the CLI in main.ts prints it and the e2e
// test asserts on it.
// Its setup steps are exported for `npm run compat` (tools/compat), which plays
// other behaviours in the same kind of run.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  CoderEndpoint,
  coderAgentEnv,
  type GooseUnderTest,
  gooseUnderTest,
  killProcessesWithEnv,
  type RunResult,
  renderExample,
  repoRoot,
  resourceValues,
  run as runCommand,
  scratchDir,
  tail,
  tools,
  Workspace,
  waitFor,
} from "../../support/workspace/index.js";
import { type CycleRecord, judge, type LifecycleMode, type LifecycleReport, type PhaseName } from "./report.js";

/** The example each mode applies. */
const TEMPLATES: Record<LifecycleMode, string> = { plain: "workspace-template", task: "task-template" };

export interface LifecycleOptions {
  /**
   * Play a task (examples/task-template: the task prompt on the first start, a
   * log snapshot on every stop) instead of a plain workspace
   * (examples/workspace-template: the first message typed into the chat).
   */
  task?: boolean;
  /** How many times the workspace starts again after the first start (default 1). */
  restarts?: number;
  /** Keep the throwaway folder and any process still running, for inspection. */
  keep?: boolean;
  /** Path of a real goose binary; default: env GOOSE_BIN, else the Goose test double. */
  goose?: string;
  /**
   * Goose provider and model (template variables goose_provider / goose_model).
   * Double: default anthropic / claude-sonnet-4-5 (it never calls a model).
   * Real goose: default openai / gpt-4o; when neither is given, a local model
   * stub stands in for OpenAI (OPENAI_HOST); when either is given, the real
   * provider is used with the credentials exported in the environment.
   */
  provider?: string;
  model?: string;
  /** The task prompt (CODER_TASK_PROMPT), or the plain workspace's first message typed into the chat. */
  prompt?: string;
  /** AgentAPI binary (default: AGENTAPI_BIN_NEW from .tools/env.sh). */
  agentapi?: string;
  /** Progress lines. */
  logger?: (line: string) => void;
  /** Called once the throwaway folder exists (for a Ctrl-C handler: see cleanupRun). */
  onRunDir?: (run: { runDir: string; home: string }) => void;
  /** Bound for each wait on the agent, in ms (default 60 s with the double, 300 s with a real goose). */
  agentTimeoutMs?: number;
}

/** An Error that names the lifecycle step that failed. */
export class LifecycleError extends Error {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(`step "${step}" failed: ${message}`);
    this.name = "LifecycleError";
  }
}

const DEFAULT_PROMPT =
  "Create a file named NOTES.md in this folder that says what this task is about, then reply with one short sentence.";
const DEFAULT_FIRST_MESSAGE =
  "Create a file named NOTES.md in this folder that lists what you can help with here, then reply with one short sentence.";
const FOLLOW_UP = "What have you done so far? Answer in one short sentence.";
const WORKSPACE_NAME = "lifecycle";
const OWNER = "developer";
const START_LINES = /goose-module: (cold start|warm start|warning|error|AgentAPI state|task prompt|phase )/;
const STOP_LINES = /goose-module: (save|snapshot|turn|state|phase |stop finished|warning|error|AgentAPI|Goose)/;

/** What a run is made of, settled before anything starts. */
interface Plan {
  mode: LifecycleMode;
  restarts: number;
  keep: boolean;
  /** The task prompt, or the plain workspace's first message. */
  prompt: string;
  goose: GooseUnderTest;
  agentapi: string;
  provider: string;
  model: string;
  /** A real goose with neither --provider nor --model talks to the local model stub. */
  useModelStub: boolean;
  agentTimeoutMs: number;
  log: (line: string) => void;
  /** A progress line, stamped with the time since the run began. */
  say: (line: string) => void;
}

interface RunDirs {
  runDir: string;
  home: string;
  /** The copy of the example template that terraform applies. */
  tfDir: string;
}

/** What every step shares once the workspace exists. */
export interface Run extends Plan, RunDirs {
  ws: Workspace;
  coder: CoderEndpoint;
  workspaceId: string;
  taskId: string;
}

interface Versions {
  goose: string;
  agentapi: string;
}

export interface Template {
  install: string;
  start: string;
  stop: string;
  sessionName: string;
  renderMs: number;
}

export async function runLifecycle(options: LifecycleOptions = {}): Promise<LifecycleReport> {
  const began = Date.now();
  const plan = await step("setup: find the tools", async () => planRun(options, began));
  const dirs = await step("setup: create the throwaway home", createRunDir);
  options.onRunDir?.({ runDir: dirs.runDir, home: dirs.home });
  const report = await withWorkspace(plan, dirs, playLifecycle).finally(() => removeRunDir(plan, dirs));
  report.totalMs = Date.now() - began;
  return report;
}

/**
 * Render, a cold start (a task's prompt, or a plain workspace's first message
 * typed into the chat), a follow-up and a stop; then each restart, a message
 * and a stop.
 */
async function playLifecycle(run: Run): Promise<LifecycleReport> {
  const versions = await step("check the binaries", () => checkBinaries(run));
  const template = await step(`render: terraform apply examples/${TEMPLATES[run.mode]}`, () => renderTemplate(run));
  const quoted = JSON.stringify(run.prompt.length > 60 ? `${run.prompt.slice(0, 57)}...` : run.prompt);
  run.say(`start #0: ${run.mode === "task" ? `task prompt ${quoted}` : `plain workspace; first message ${quoted}`}`);
  const first = await step(
    `start: run the start script (cold start${run.mode === "task" ? " with the task prompt" : ""})`,
    () => startCycle(run, template, 0, 0),
  );
  if (run.mode === "plain")
    await step("converse: type the first message into the chat", () =>
      converse(run, first, run.prompt, "first message answered"),
    );
  const cycles = [first];
  await step("converse: follow-up message through AgentAPI", () =>
    converse(run, first, FOLLOW_UP, "follow-up answered"),
  );
  await step("stop #0: run the stop script", () => stopCycle(run, template, first));
  for (let i = 1; i <= run.restarts; i++) {
    const previous = cycles[cycles.length - 1] as CycleRecord;
    const cycle = await step(`restart #${i}: run the start script again`, () =>
      startCycle(run, template, i, previous.messagesBeforeStop),
    );
    cycles.push(cycle);
    await step(`converse #${i}: message after restart #${i}`, () =>
      converse(run, cycle, `Restart #${i}: are you still on the same task? Answer in one short sentence.`),
    );
    await step(`stop #${i}: run the stop script`, () => stopCycle(run, template, cycle));
  }
  return step("report: count the prompt deliveries", () => buildReport(run, versions, template, cycles));
}

export async function step<T>(name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof LifecycleError) throw error;
    throw new LifecycleError(name, (error as Error)?.message ?? String(error));
  }
}

export function planRun(options: LifecycleOptions, began: number): Plan {
  const mode: LifecycleMode = options.task ? "task" : "plain";
  const restarts = options.restarts ?? 1;
  if (!Number.isInteger(restarts) || restarts < 0)
    throw new LifecycleError("options", `restarts must be a whole number >= 0, not ${restarts}`);
  const goose = gooseUnderTest(options.goose ?? (process.env.GOOSE_BIN || undefined));
  const agentapi = path.resolve(options.agentapi ?? tools.agentapiNew);
  if (!existsSync(agentapi)) throw new Error(`the AgentAPI binary ${agentapi} does not exist`);
  const log = options.logger ?? (() => undefined);
  return {
    mode,
    restarts,
    keep: Boolean(options.keep),
    prompt: options.prompt ?? (mode === "task" ? DEFAULT_PROMPT : DEFAULT_FIRST_MESSAGE),
    goose,
    agentapi,
    provider: options.provider ?? goose.provider ?? "anthropic",
    model: options.model ?? goose.model ?? "claude-sonnet-4-5",
    useModelStub: goose.real && options.provider === undefined && options.model === undefined,
    agentTimeoutMs: options.agentTimeoutMs ?? (goose.real ? 300_000 : 60_000),
    log,
    say: (line) => log(`[${((Date.now() - began) / 1000).toFixed(1).padStart(5)} s] ${line}`),
  };
}

export async function createRunDir(): Promise<RunDirs> {
  const runDir = await scratchDir("lifecycle");
  const dirs = { runDir, home: path.join(runDir, "home"), tfDir: path.join(runDir, "template") };
  await mkdir(dirs.home, { recursive: true });
  await mkdir(dirs.tfDir, { recursive: true });
  return dirs;
}

/**
 * Starts the Coder endpoint and the workspace, runs `body` with them, then
 * closes both; the workspace's processes are removeRunDir's business.
 */
export async function withWorkspace<T>(plan: Plan, dirs: RunDirs, body: (run: Run) => Promise<T>): Promise<T> {
  const coder = await step("start the local Coder endpoint", () => CoderEndpoint.start());
  try {
    const ws = await step(plan.useModelStub ? "start the local model stub" : "setup: create the workspace", () =>
      createWorkspace(plan, dirs, coder),
    );
    try {
      return await body({ ...plan, ...dirs, ws, coder, workspaceId: randomUUID(), taskId: randomUUID() });
    } finally {
      await ws.closeModelStub().catch(() => undefined);
    }
  } finally {
    await coder.close().catch(() => undefined);
  }
}

async function createWorkspace(plan: Plan, dirs: RunDirs, coder: CoderEndpoint): Promise<Workspace> {
  const ws = await Workspace.create({
    home: dirs.home,
    goose: plan.goose,
    modelStub: plan.useModelStub,
    agentapi: plan.agentapi,
    agentTimeoutMs: plan.agentTimeoutMs,
  });
  ws.setEnv(
    coderAgentEnv({
      url: `${coder.url}/`,
      token: coder.token,
      workspaceName: WORKSPACE_NAME,
      owner: OWNER,
      agentName: "main",
    }),
  );
  if (plan.goose.real && !plan.useModelStub) ws.setEnv(providerCredentials());
  plan.say(
    `throwaway home ${path.relative(repoRoot, dirs.home)}, AgentAPI port ${ws.port}, Coder endpoint ${coder.url}`,
  );
  if (ws.modelStub)
    plan.say(`model stub (OpenAI API) at ${ws.modelStub.url} for a real goose with ${plan.provider}/${plan.model}`);
  else if (plan.goose.real)
    plan.say(
      `real goose with provider ${plan.provider}, model ${plan.model}: its credentials come from this environment`,
    );
  return ws;
}

/** A real provider needs the user's credentials and endpoints, which the Coder agent would pass on too. */
function providerCredentials(): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(CODER|GOOSE|AGENTAPI)_/.test(key)) continue;
    if (
      /(_API_KEY|_API_TOKEN|_HOST|_BASE_URL|_ENDPOINT|_REGION|_PROFILE)$/.test(key) ||
      /^(AWS|AZURE|GOOGLE|GCP|VERTEX|DATABRICKS|OLLAMA|OPENROUTER)_/.test(key)
    ) {
      found[key] = value;
    }
  }
  return found;
}

export async function checkBinaries(run: Run): Promise<Versions> {
  const a = await runCommand(run.agentapi, ["--version"], { timeoutMs: 20_000 });
  if (a.code !== 0) throw new Error(`${run.agentapi} --version exited ${a.code}`);
  const g = await runCommand(run.goose.bin, ["--version"], { env: run.ws.env(), cwd: run.home, timeoutMs: 20_000 });
  if (g.code !== 0) throw new Error(`${run.goose.bin} --version exited ${g.code}: ${tail(g.stderr, 5)}`);
  const versions = { agentapi: a.stdout.trim().replace(/^agentapi version /, ""), goose: g.stdout.trim() };
  run.say(
    `AgentAPI ${versions.agentapi} (${run.agentapi}); ${run.goose.real ? "goose" : "Goose test double"} ${versions.goose} (${run.goose.bin})`,
  );
  return versions;
}

export async function renderTemplate(run: Run): Promise<Template> {
  const t0 = Date.now();
  const vars = {
    install_goose: "false",
    install_agentapi: "false",
    agentapi_port: String(run.ws.port),
    folder: path.join(run.home, "project"),
    goose_provider: run.provider,
    goose_model: run.model,
  };
  const rendered = await renderExample(TEMPLATES[run.mode], run.tfDir, vars, {
    CODER_AGENT_URL: `${run.coder.url}/`,
    CODER_AGENT_TOKEN: run.coder.token,
    CODER_WORKSPACE_ID: run.workspaceId,
    CODER_WORKSPACE_NAME: WORKSPACE_NAME,
    CODER_WORKSPACE_OWNER: OWNER,
    CODER_WORKSPACE_OWNER_NAME: "Lifecycle Developer",
    CODER_WORKSPACE_OWNER_EMAIL: "developer@example.com",
    CODER_WORKSPACE_TRANSITION: "start",
    ...(run.mode === "task" ? { CODER_TASK_ID: run.taskId, CODER_TASK_PROMPT: run.prompt } : {}),
  });
  for (const warning of rendered.warnings) run.say(`render: terraform ${warning.trim()}`);
  if (run.mode === "task") {
    const task = resourceValues(rendered, "data.coder_task.me");
    if (task.enabled !== true || task.id !== run.taskId)
      throw new Error(`data.coder_task.me is not this task (enabled=${task.enabled}, id=${task.id})`);
    if (!resourceValues(rendered, "coder_ai_task.task[0]").app_id) throw new Error("coder_ai_task.task has no app_id");
  } else {
    const tasky = rendered.resources.filter((r) => /(^|\.)(data\.coder_task|coder_ai_task)\./.test(r.address));
    if (tasky.length > 0)
      throw new Error(
        `a plain workspace must not read Tasks, but the state has ${tasky.map((r) => r.address).join(", ")}`,
      );
  }
  // The agent's own env block reaches its scripts too.
  const agentEnv = (resourceValues(rendered, "coder_agent.main").env as Record<string, unknown> | null) ?? {};
  run.ws.setEnv(Object.fromEntries(Object.entries(agentEnv).map(([k, v]) => [k, String(v)])));
  const sessionName = String(rendered.outputs.goose_session_name ?? "");
  if (!sessionName) throw new Error("the template has no goose_session_name output");
  await writeRerunScripts(run, rendered);
  const renderMs = Date.now() - t0;
  run.say(
    `render: terraform init + apply + show in ${renderMs} ms; install script ${rendered.install.length} bytes, start script ${rendered.start.length} bytes, stop script ${rendered.stop.length} bytes; session name ${sessionName}`,
  );
  return { install: rendered.install, start: rendered.start, stop: rendered.stop, sessionName, renderMs };
}

/**
 * For a --keep inspection: the rendered scripts, and run-start.sh (the install
 * and start scripts at once) and run-stop.sh, which run them with the agent's env.
 */
async function writeRerunScripts(run: Run, scripts: { install: string; start: string; stop: string }): Promise<void> {
  const exports = Object.entries(run.ws.env())
    .filter(([k]) => !/(_API_KEY|_API_TOKEN)$/.test(k))
    .map(([k, v]) => `export ${k}=${shellQuote(String(v))}`)
    .join("\n");
  const file = (name: string) => path.join(run.runDir, `${name}-script.sh`);
  for (const name of ["install", "start", "stop"] as const) await writeFile(file(name), scripts[name]);
  const read = (name: string) => `"$(cat ${shellQuote(file(name))})"`;
  for (const [name, command] of [
    ["start", `/bin/sh -c ${read("install")} & /bin/sh -c ${read("start")}; code=$?; wait; exit "$code"`],
    ["stop", `exec /bin/sh -c ${read("stop")}`],
  ] as const) {
    const wrapper = path.join(run.runDir, `run-${name}.sh`);
    await writeFile(
      wrapper,
      `#!/bin/sh\n# Runs the rendered ${name} coder_script(s) as the Coder agent does.\n${exports}\ncd "$HOME"\n${command}\n`,
    );
    await chmod(wrapper, 0o755);
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

async function runScript(run: Run, template: Template, which: "start" | "stop"): Promise<RunResult> {
  const result = await (which === "start"
    ? run.ws.runStart(template, undefined, 240_000)
    : run.ws.runScript(template.stop, undefined, 240_000));
  if (result.code !== 0)
    throw new Error(
      `the ${which} script exited ${result.code}.\n--- stdout ---\n${tail(result.stdout)}\n--- stderr ---\n${tail(result.stderr)}`,
    );
  return result;
}

function matching(text: string, pattern: RegExp): string[] {
  return text.split("\n").filter((line) => pattern.test(line));
}

/** Runs the start script, then waits until the chat is stable (after a restart: restored). */
async function startCycle(run: Run, template: Template, index: number, expectRestored: number): Promise<CycleRecord> {
  const phase: PhaseName = index === 0 ? "start" : "restart";
  const t0 = Date.now();
  const script = await runScript(run, template, "start");
  const output = script.stdout + script.stderr;
  const mode = /goose-module: cold start:/.test(output)
    ? "cold"
    : /goose-module: warm start:/.test(output)
      ? "warm"
      : "unknown";
  run.say(
    `${phase} #${index}: start script exited 0 in ${script.ms} ms (${mode} start); waiting for the chat to be stable`,
  );
  if (index > 0) await waitForRestoredChat(run, expectRestored);
  else if (run.mode === "task") await waitForPromptReply(run);
  else await waitForIdleChat(run);
  const sessions = await run.ws.sessionsNamed(template.sessionName);
  const cycle: CycleRecord = {
    index,
    mode,
    sessionId: sessions[0] ?? null,
    sessionsWithName: sessions.length,
    messagesAfterStart: (await run.ws.messages()).length,
    messagesBeforeStop: 0,
    phases: { [phase]: Date.now() - t0 },
    startScriptMs: script.ms,
    stopScriptMs: 0,
    snapshot: null,
    startLines: matching(output, START_LINES),
    stopLines: [],
  };
  run.say(
    `${phase} #${index}: ${mode} start, Goose session ${cycle.sessionId ?? "(none)"}, ${cycle.messagesAfterStart} message(s) in the chat`,
  );
  return cycle;
}

/** The prompt's turn is over once Goose has stored its reply; then the screen settles. */
async function waitForPromptReply(run: Run): Promise<void> {
  await run.ws.agentapi.waitFor(
    "Goose's reply to the task prompt (in its database)",
    async () => (await run.ws.replies()) >= 1,
  );
  await run.ws.agentapi.waitFor(
    "the prompt's reply in /messages",
    async (status) =>
      status === "stable" && (await run.ws.messages()).some((m) => m.role === "agent" && m.content.trim() !== ""),
  );
}

/** A plain workspace sends nothing by itself: Goose waits, idle, for the first message. */
async function waitForIdleChat(run: Run): Promise<void> {
  await run.ws.waitStable();
  const replies = await run.ws.replies();
  if (replies !== 0) throw new Error(`Goose answered ${replies} time(s) before anyone typed into the chat`);
}

async function waitForRestoredChat(run: Run, expected: number): Promise<void> {
  await run.ws.waitStable();
  // AgentAPI loads the saved chat once Goose's prompt shows. A shorter chat is
  // for judge() to report, not a reason to fail here.
  await waitFor(
    `the restored history (${expected} messages)`,
    async () => (await run.ws.messages()).length >= expected,
    5000,
  ).catch(() => undefined);
}

async function converse(run: Run, cycle: CycleRecord, message: string, what = "answered"): Promise<void> {
  const t0 = Date.now();
  await run.ws.send(message);
  const ms = Date.now() - t0;
  cycle.phases.converse = (cycle.phases.converse ?? 0) + ms;
  run.say(`converse #${cycle.index}: ${what} in ${ms} ms; ${(await run.ws.messages()).length} message(s) in the chat`);
}

async function stopCycle(run: Run, template: Template, cycle: CycleRecord): Promise<void> {
  cycle.messagesBeforeStop = (await run.ws.messages()).length;
  const postsBefore = run.coder.snapshots().length;
  const t0 = Date.now();
  const script = await runScript(run, template, "stop");
  cycle.phases.stop = Date.now() - t0;
  cycle.stopScriptMs = script.ms;
  cycle.stopLines = matching(script.stdout + script.stderr, STOP_LINES);
  const post = run.coder.snapshots()[postsBefore];
  cycle.snapshot = post ? { stop: cycle.index, ...post } : null;
  // The stop script returns once AgentAPI has exited; its port must be free.
  await waitFor("AgentAPI to stop answering", async () => (await run.ws.status()) === null, 10_000);
  run.say(
    `stop #${cycle.index}: stop script exited 0 in ${script.ms} ms; ` +
      (cycle.snapshot
        ? `log snapshot posted (${cycle.snapshot.messages} message(s), ${cycle.snapshot.bytes} bytes)`
        : "no log snapshot arrived"),
  );
}

async function buildReport(
  run: Run,
  versions: Versions,
  template: Template,
  cycles: CycleRecord[],
): Promise<LifecycleReport> {
  const leftAfterStop = await run.ws.processes();
  // Any user turn that carries the prompt (or the first message) counts, however
  // it arrived (instructions file, typed, pasted); Goose's hidden
  // <turn-context> rows never do.
  const promptDeliveries = await run.ws.deliveries((text) => text.includes(run.prompt.trim()));
  const stub = run.ws.modelStub;
  const report: LifecycleReport = {
    ok: false,
    mode: run.mode,
    template: `examples/${TEMPLATES[run.mode]}`,
    checks: [],
    runDir: run.runDir,
    home: run.home,
    kept: run.keep,
    port: run.ws.port,
    coderUrl: run.coder.url,
    workspaceId: run.workspaceId,
    taskId: run.taskId,
    prompt: run.prompt,
    goose: { kind: run.goose.real ? "real" : "double", path: run.goose.bin, version: versions.goose },
    agentapi: { path: run.agentapi, version: versions.agentapi },
    sessionName: template.sessionName,
    cycles,
    provider: run.provider,
    model: run.model,
    modelStub: stub ? { url: stub.url, requests: (await stub.requests()).length } : null,
    promptDeliveries,
    snapshots: cycles.flatMap((c) => (c.snapshot ? [c.snapshot] : [])),
    renderMs: template.renderMs,
    totalMs: 0,
    leftAfterStop,
  };
  report.checks = judge(report);
  report.ok = report.checks.every((c) => c.ok);
  return report;
}

export async function removeRunDir(plan: Plan, dirs: RunDirs): Promise<void> {
  if (plan.keep) {
    plan.log(
      `kept ${dirs.runDir} (home, rendered scripts, run-start.sh / run-stop.sh${plan.useModelStub ? ", model stub request log" : plan.goose.real ? "" : ", Goose double event log"})`,
    );
    return;
  }
  const left = await cleanupRun(dirs.runDir, dirs.home);
  if (left.length > 0) plan.log(`warning: processes ${left.join(", ")} with HOME=${dirs.home} survived SIGKILL`);
}

/**
 * Ends every process started with this HOME (AgentAPI, Goose, a script still
 * running) and removes the throwaway folder. Returns the PIDs that survived.
 */
export async function cleanupRun(runDir: string, home: string): Promise<number[]> {
  const left = await killProcessesWithEnv(`HOME=${home}`);
  await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
  return left;
}

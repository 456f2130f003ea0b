// Plays a Coder workspace's life on this machine with the real pieces:
// `terraform apply` of examples/task-template with the real coder provider,
// the rendered start and stop coder_scripts run as the Coder agent runs them
// (`/bin/sh -c <script>` in a throwaway HOME), real AgentAPI, the Goose test
// double (or a real goose: --goose / GOOSE_BIN, by default talking to the local
// model stub of test/model-stub), and a local stand-in for the Coder endpoint
// that receives the task log snapshot. Deliveries and replies are counted in
// Goose's own database, the same way for both. Returns a structured report;
// the CLI in main.ts prints it and the e2e test asserts on it.
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";
import {
  appliedResources,
  freePort,
  gooseDeliveries,
  gooseReplies,
  gooseSessionsDb,
  linkGoose,
  REAL_GOOSE_MODEL,
  REAL_GOOSE_PROVIDER,
  processesWithEnv,
  run,
  tools,
  waitFor,
  type RunResult,
} from "../../test/integration/harness.js";
import { startModelStub, type ModelStub } from "../../test/model-stub/server.js";
import { tail } from "../../src/user-scripts.js";

export interface LifecycleOptions {
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
  /** The task prompt (CODER_TASK_PROMPT). */
  prompt?: string;
  /** AgentAPI binary (default: AGENTAPI_BIN_NEW from .tools/env.sh). */
  agentapi?: string;
  /** Progress lines. */
  logger?: (line: string) => void;
  /** The repository root (default: found from this file's location). */
  repoRoot?: string;
  /** Called once the throwaway folder exists (for a Ctrl-C handler: see cleanupRun). */
  onRunDir?: (run: { runDir: string; home: string }) => void;
  /** Bound for each wait on the agent, in ms (default 60 s with the double, 300 s with a real goose). */
  agentTimeoutMs?: number;
}

export type PhaseName = "render" | "start" | "converse" | "stop" | "restart";

export interface SnapshotPost {
  /** Which stop sent it (0 = the stop after the first start). */
  stop: number;
  taskId: string;
  tokenMatched: boolean;
  format: string | null;
  bytes: number;
  messages: number;
  answered: number;
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
  snapshot: SnapshotPost | null;
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
  checks: Check[];
  runDir: string;
  home: string;
  kept: boolean;
  port: number;
  coderUrl: string;
  workspaceId: string;
  taskId: string;
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
  /** How many user-visible user messages in Goose's database carry the task prompt. */
  promptDeliveries: number;
  snapshots: SnapshotPost[];
  /** render is once; the others are per cycle, see cycles[].phases. */
  renderMs: number;
  totalMs: number;
  /** Processes with this HOME still alive after the last stop script (before any clean-up). */
  leftAfterStop: number[];
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

const DEFAULT_PROMPT = "Create a file named NOTES.md in this folder that says what this task is about, then reply with one short sentence.";
const FOLLOW_UP = "What have you done so far? Answer in one short sentence.";
const MODULE_SOURCE_LINE = /^(\s*source\s*=\s*)"\.\.\/\.\."\s*$/m;

/** The folder holding package.json and examples/task-template, from this file (or the bundle) upwards. */
export function findRepoRoot(start: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json")) && existsSync(path.join(dir, "examples", "task-template", "main.tf"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`cannot find the repository root (a folder with package.json and examples/task-template) above ${start}`);
  }
}

interface Message {
  id: number;
  content: string;
  role: string;
}

/** A stand-in for the Coder deployment: records task log snapshots and answers 204. */
class CoderEndpoint {
  readonly posts: Array<Omit<SnapshotPost, "stop">> = [];
  private server: Server | null = null;
  url = "";

  constructor(private readonly token: string) {}

  async listen(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", "http://coder.local");
    const match = /^\/api\/v2\/workspaceagents\/me\/tasks\/([^/]+)\/log-snapshot$/.exec(url.pathname);
    if (req.method !== "POST" || !match) {
      res.writeHead(404).end("not found");
      return;
    }
    let messages = -1;
    try {
      const parsed = JSON.parse(body.toString("utf8")) as { messages?: unknown[] };
      messages = Array.isArray(parsed.messages) ? parsed.messages.length : -1;
    } catch {
      // recorded as -1: not JSON
    }
    this.posts.push({
      taskId: decodeURIComponent(match[1] ?? ""),
      tokenMatched: req.headers["coder-session-token"] === this.token,
      format: url.searchParams.get("format"),
      bytes: body.length,
      messages,
      answered: 204,
    });
    res.writeHead(204).end();
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function lines(text: string, pattern: RegExp): string[] {
  return text.split("\n").filter((line) => pattern.test(line));
}

export async function runLifecycle(options: LifecycleOptions = {}): Promise<LifecycleReport> {
  const log = options.logger ?? (() => undefined);
  const restarts = options.restarts ?? 1;
  if (!Number.isInteger(restarts) || restarts < 0) throw new LifecycleError("options", `restarts must be a whole number >= 0, not ${restarts}`);
  const began = Date.now();
  const say = (line: string) => log(`[${((Date.now() - began) / 1000).toFixed(1).padStart(5)} s] ${line}`);
  const gooseOption = options.goose ?? (process.env.GOOSE_BIN || undefined);
  const realGoose = gooseOption ? path.resolve(gooseOption) : null;
  const agentTimeoutMs = options.agentTimeoutMs ?? (realGoose ? 300_000 : 60_000);

  // Steps: each names itself in a failure.
  let current = "setup";
  const step = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    current = name;
    try {
      return await body();
    } catch (error) {
      if (error instanceof LifecycleError) throw error;
      throw new LifecycleError(name, (error as Error)?.message ?? String(error));
    }
  };

  // ---- (a) throwaway folder, port, Coder endpoint ---------------------------------
  const { root, terraform, agentapi, gooseBin } = await step("setup: find the tools", async () => {
    const root = options.repoRoot ?? findRepoRoot();
    const found = {
      root,
      terraform: tools.terraform,
      agentapi: path.resolve(options.agentapi ?? tools.agentapiNew),
      gooseBin: realGoose ?? path.join(root, "test", "goose-double", "goose"),
    };
    for (const [what, file] of [
      ["AgentAPI", found.agentapi],
      ["goose", found.gooseBin],
    ] as const) {
      if (!existsSync(file)) throw new Error(`the ${what} binary ${file} does not exist`);
    }
    return found;
  });
  const { runDir, home, tfDir, folder, eventLog, port, gooseDir } = await step("setup: create the throwaway home", async () => {
    const port = await freePort();
    await mkdir(path.join(root, ".tmp"), { recursive: true });
    const runDir = await mkdtemp(path.join(root, ".tmp", "lifecycle-"));
    const dirs = {
      runDir,
      home: path.join(runDir, "home"),
      tfDir: path.join(runDir, "template"),
      folder: path.join(runDir, "home", "project"),
      eventLog: path.join(runDir, "goose-double-events.jsonl"),
    };
    await mkdir(dirs.home, { recursive: true });
    await mkdir(dirs.tfDir, { recursive: true });
    options.onRunDir?.({ runDir, home: dirs.home });
    // A real goose goes first on PATH through a folder holding only a `goose` symlink
    // (as in the integration tests), inside the run folder so --keep keeps it.
    const gooseDir = realGoose ? linkGoose(realGoose, runDir) : path.dirname(gooseBin);
    return { ...dirs, port, gooseDir };
  });
  const token = randomBytes(16).toString("hex");
  const coder = new CoderEndpoint(token);
  const workspaceId = randomUUID();
  const taskId = randomUUID();
  const workspaceName = "lifecycle";
  const owner = "developer";
  const prompt = options.prompt ?? DEFAULT_PROMPT;
  const useModelStub = realGoose !== null && options.provider === undefined && options.model === undefined;
  const provider = options.provider ?? (realGoose ? REAL_GOOSE_PROVIDER : "anthropic");
  const model = options.model ?? (realGoose ? REAL_GOOSE_MODEL : "claude-sonnet-4-5");
  let modelStub: ModelStub | null = null;

  const cycles: CycleRecord[] = [];
  const snapshots: SnapshotPost[] = [];
  let renderMs = 0;
  let sessionName = "";
  let gooseVersion = "";
  let agentapiVersion = "";
  let leftAfterStop: number[] = [];
  let report: LifecycleReport | null = null;

  // The environment the Coder agent gives its scripts: this HOME, a PATH with
  // goose and agentapi, the agent's URL and token, the template's agent env.
  let agentEnv: Record<string, string> = {};
  const scriptEnv = (): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = {
      ...agentEnv,
      HOME: home,
      USER: process.env.USER ?? "coder",
      LOGNAME: process.env.LOGNAME ?? process.env.USER ?? "coder",
      PATH: [gooseDir, path.dirname(agentapi), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
      LANG: "C.UTF-8",
      CODER: "true",
      CODER_AGENT_URL: `${coder.url}/`,
      CODER_AGENT_TOKEN: token,
      CODER_WORKSPACE_NAME: workspaceName,
      CODER_WORKSPACE_OWNER_NAME: owner,
      CODER_WORKSPACE_AGENT_NAME: "main",
    };
    if (modelStub) {
      // A real Goose with the local model stub as its OpenAI provider: no real credentials.
      env.OPENAI_HOST = modelStub.url;
      env.OPENAI_API_KEY = "model-stub-key";
    } else if (realGoose) {
      // A real Goose with a real provider needs the user's credentials and endpoints.
      for (const [key, value] of Object.entries(process.env)) {
        if (value === undefined || /^(CODER|GOOSE|AGENTAPI)_/.test(key)) continue;
        if (/(_API_KEY|_API_TOKEN|_HOST|_BASE_URL|_ENDPOINT|_REGION|_PROFILE)$/.test(key) || /^(AWS|AZURE|GOOGLE|GCP|VERTEX|DATABRICKS|OLLAMA|OPENROUTER)_/.test(key)) {
          env[key] = value;
        }
      }
    } else {
      env.GOOSE_DOUBLE_EVENT_LOG = eventLog;
    }
    return env;
  };

  const url = (route: string) => `http://127.0.0.1:${port}${route}`;
  const status = async (): Promise<string | null> => {
    try {
      const response = await fetch(url("/status"), { signal: AbortSignal.timeout(2000) });
      return ((await response.json()) as { status: string }).status;
    } catch {
      return null;
    }
  };
  const messages = async (): Promise<Message[]> => {
    const response = await fetch(url("/messages"), { signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`GET /messages answered ${response.status}`);
    return ((await response.json()) as { messages: Message[] }).messages;
  };
  // While waiting on the agent, AgentAPI going away is a failure, not a reason to wait on.
  let silentSince: number | null = null;
  const liveStatus = async (): Promise<string | null> => {
    const now = await status();
    if (now !== null) {
      silentSince = null;
      return now;
    }
    silentSince ??= Date.now();
    if (Date.now() - silentSince > 3000) {
      silentSince = null;
      const agentLog = path.join(home, ".coder-modules", "coder", "goose", "logs", "agentapi.log");
      throw new Error(`AgentAPI stopped answering on port ${port}. Last lines of ${agentLog}:\n${tail(await readFile(agentLog, "utf8").catch(() => "(no log)"), 15)}`);
    }
    return null;
  };
  const waitStable = () => waitFor("AgentAPI status \"stable\"", async () => (await liveStatus()) === "stable", agentTimeoutMs);
  // Goose's own database, as the integration tests read it (test/integration/harness.ts):
  // one assistant row per finished turn; the user rows as soon as Enter is pressed.
  const gooseDb = () => gooseSessionsDb(scriptEnv());
  const replies = () => gooseReplies(gooseDb());

  /** Sends a user message the way the dashboard does, then waits for the reply to settle. */
  const send = async (content: string): Promise<void> => {
    await waitStable();
    const before = await replies();
    const count = (await messages()).length;
    const response = await fetch(url("/message"), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ content, type: "user" }),
      signal: AbortSignal.timeout(agentTimeoutMs),
    });
    if (!response.ok) throw new Error(`POST /message answered ${response.status}: ${await response.text()}`);
    await waitFor("Goose's reply (in its database)", async () => (await liveStatus()) !== null && (await replies()) > before, agentTimeoutMs);
    await waitFor("the reply in /messages", async () => {
      if ((await liveStatus()) !== "stable") return false;
      const now = await messages();
      return now.length >= count + 2 && now[now.length - 1]?.role === "agent";
    }, agentTimeoutMs);
  };

  const sessionId = async (): Promise<{ id: string | null; count: number }> => {
    const listed = await run(gooseBin, ["session", "list", "--format", "json"], { cwd: folder, env: scriptEnv(), timeoutMs: 60_000 });
    if (listed.code !== 0) throw new Error(`goose session list exited ${listed.code}: ${tail(listed.stderr, 5)}`);
    const sessions = JSON.parse(listed.stdout.trim() || "[]") as Array<{ id?: string; name?: string; description?: string }>;
    const found = sessions.filter((s) => s.name === sessionName || (s.name === undefined && s.description === sessionName));
    // Goose lists the most recently active first, which is the one a resume by name picks.
    return { id: found[0]?.id ?? null, count: found.length };
  };

  let startScript = "";
  let stopScript = "";
  const runScript = async (which: "start" | "stop"): Promise<RunResult> => {
    const result = await run("/bin/sh", ["-c", which === "start" ? startScript : stopScript], { cwd: home, env: scriptEnv(), timeoutMs: 240_000 });
    if (result.code !== 0) throw new Error(`the ${which} script exited ${result.code}.\n--- stdout ---\n${tail(result.stdout)}\n--- stderr ---\n${tail(result.stderr)}`);
    return result;
  };

  /** Runs the start script, then waits until the chat is stable (for a restart: restored). */
  const start = async (index: number, expectRestored: number): Promise<CycleRecord> => {
    const phase: PhaseName = index === 0 ? "start" : "restart";
    const t0 = Date.now();
    const script = await runScript("start");
    const output = script.stdout + script.stderr;
    const mode = /goose-module: cold start:/.test(output) ? "cold" : /goose-module: warm start:/.test(output) ? "warm" : "unknown";
    say(`${phase} #${index}: start script exited 0 in ${script.ms} ms (${mode} start); waiting for the chat to be stable`);
    if (index === 0) {
      // The prompt's turn is over once Goose has stored its reply, then the screen settles.
      await waitFor("Goose's reply to the task prompt (in its database)", async () => (await liveStatus()) !== null && (await replies()) >= 1, agentTimeoutMs);
      await waitFor("the prompt's reply in /messages", async () => (await liveStatus()) === "stable" && (await messages()).some((m) => m.role === "agent" && m.content.trim() !== ""), agentTimeoutMs);
    } else {
      await waitStable();
      // AgentAPI loads the saved chat once Goose's prompt shows; give it a bounded moment.
      await waitFor(`the restored history (${expectRestored} messages)`, async () => (await messages()).length >= expectRestored, 5000).catch(() => undefined);
    }
    const session = await sessionId();
    const cycle: CycleRecord = {
      index,
      mode,
      sessionId: session.id,
      sessionsWithName: session.count,
      messagesAfterStart: (await messages()).length,
      messagesBeforeStop: 0,
      phases: { [phase]: Date.now() - t0 },
      startScriptMs: script.ms,
      stopScriptMs: 0,
      snapshot: null,
      startLines: lines(output, /goose-module: (cold start|warm start|warning|error|AgentAPI state|task prompt|phase )/),
      stopLines: [],
    };
    say(`${phase} #${index}: ${mode} start, Goose session ${cycle.sessionId ?? "(none)"}, ${cycle.messagesAfterStart} message(s) in the chat`);
    return cycle;
  };

  const stop = async (cycle: CycleRecord): Promise<void> => {
    cycle.messagesBeforeStop = (await messages()).length;
    const postsBefore = coder.posts.length;
    const t0 = Date.now();
    const script = await runScript("stop");
    cycle.phases.stop = Date.now() - t0;
    cycle.stopScriptMs = script.ms;
    cycle.stopLines = lines(script.stdout + script.stderr, /goose-module: (save|snapshot|turn|state|phase |stop finished|warning|error|AgentAPI|Goose)/);
    const post = coder.posts[postsBefore];
    cycle.snapshot = post ? { stop: cycle.index, ...post } : null;
    if (cycle.snapshot) snapshots.push(cycle.snapshot);
    // The stop script returns once AgentAPI has exited; its port must be free.
    await waitFor("AgentAPI to stop answering", async () => (await status()) === null, 10_000);
    say(
      `stop #${cycle.index}: stop script exited 0 in ${script.ms} ms; ` +
        (cycle.snapshot ? `log snapshot posted (${cycle.snapshot.messages} message(s), ${cycle.snapshot.bytes} bytes)` : "no log snapshot arrived"),
    );
  };

  try {
    await step("start the local Coder endpoint", () => coder.listen());
    say(`throwaway home ${path.relative(root, home)}, AgentAPI port ${port}, Coder endpoint ${coder.url}`);
    if (useModelStub) {
      await step("start the local model stub", async () => {
        modelStub = await startModelStub({ model, logFile: path.join(runDir, "model-stub-requests.jsonl") });
      });
      say(`model stub (OpenAI API) at ${modelStub!.url} for a real goose with ${provider}/${model}`);
    } else if (realGoose) {
      say(`real goose with provider ${provider}, model ${model}: its credentials come from this environment`);
    }

    await step("check the binaries", async () => {
      const a = await run(agentapi, ["--version"], { timeoutMs: 20_000 });
      if (a.code !== 0) throw new Error(`${agentapi} --version exited ${a.code}`);
      agentapiVersion = a.stdout.trim().replace(/^agentapi version /, "");
      const g = await run(gooseBin, ["--version"], { env: scriptEnv(), cwd: home, timeoutMs: 20_000 });
      if (g.code !== 0) throw new Error(`${gooseBin} --version exited ${g.code}: ${tail(g.stderr, 5)}`);
      gooseVersion = g.stdout.trim();
      say(`AgentAPI ${agentapiVersion} (${agentapi}); ${realGoose ? "goose" : "Goose test double"} ${gooseVersion} (${gooseBin})`);
    });

    // ---- (b) render the template -----------------------------------------------------
    await step("render: terraform apply examples/task-template", async () => {
      const t0 = Date.now();
      // The template is applied from a copy in the throwaway folder, so that
      // init writes nothing (lock file, .terraform) into examples/. Only the
      // module source changes: "../.." becomes the path to this repository.
      const template = await readFile(path.join(root, "examples", "task-template", "main.tf"), "utf8");
      if (!MODULE_SOURCE_LINE.test(template)) throw new Error('examples/task-template/main.tf has no `source = "../.."` line for the module');
      const relative = path.relative(tfDir, root);
      await writeFile(path.join(tfDir, "main.tf"), template.replace(MODULE_SOURCE_LINE, `$1"${relative}"`));
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        TF_IN_AUTOMATION: "1",
        TF_DATA_DIR: path.join(runDir, "terraform-data"),
        CODER_AGENT_URL: `${coder.url}/`,
        CODER_AGENT_TOKEN: token,
        CODER_WORKSPACE_ID: workspaceId,
        CODER_WORKSPACE_NAME: workspaceName,
        CODER_WORKSPACE_OWNER: owner,
        CODER_WORKSPACE_OWNER_NAME: "Lifecycle Developer",
        CODER_WORKSPACE_OWNER_EMAIL: "developer@example.com",
        CODER_WORKSPACE_TRANSITION: "start",
        CODER_TASK_ID: taskId,
        CODER_TASK_PROMPT: prompt,
      };
      const vars = {
        install_goose: "false",
        install_agentapi: "false",
        agentapi_port: String(port),
        folder,
        goose_provider: provider,
        goose_model: model,
      };
      const varArgs = Object.entries(vars).map(([k, v]) => `-var=${k}=${v}`);
      const init = await run(terraform, ["init", "-input=false", "-no-color"], { cwd: tfDir, env, timeoutMs: 180_000 });
      if (init.code !== 0) throw new Error(`terraform init exited ${init.code}:\n${tail(init.stdout + init.stderr)}`);
      // The state lands in the throwaway copy's folder (terraform.tfstate, the
      // local backend's default), so -state (deprecated for apply) is not needed.
      const state = path.join(tfDir, "terraform.tfstate");
      const apply = await run(terraform, ["apply", "-auto-approve", "-input=false", "-no-color", ...varArgs], { cwd: tfDir, env, timeoutMs: 180_000 });
      if (apply.code !== 0) throw new Error(`terraform apply exited ${apply.code}:\n${tail(apply.stdout + apply.stderr)}`);
      for (const warning of new Set(lines(apply.stdout + apply.stderr, /^Warning: /))) say(`render: terraform ${warning.trim()}`);
      const show = await run(terraform, ["show", "-json", "-no-color", state], { cwd: tfDir, env, timeoutMs: 60_000 });
      if (show.code !== 0) throw new Error(`terraform show exited ${show.code}:\n${tail(show.stderr)}`);
      const parsed = JSON.parse(show.stdout) as { values?: { root_module?: TfModule; outputs?: Record<string, { value: unknown }> } };
      const resources = appliedResources(parsed);
      const find = (address: string) => {
        const found = resources.find((r) => r.address === address);
        if (!found) throw new Error(`no ${address} in the applied state`);
        return found.values;
      };
      startScript = String(find("module.goose.module.agentapi.coder_script.start").script);
      stopScript = String(find("module.goose.module.agentapi.coder_script.stop").script);
      const task = find("data.coder_task.me");
      if (task.enabled !== true || task.id !== taskId) throw new Error(`data.coder_task.me is not this task (enabled=${task.enabled}, id=${task.id})`);
      if (!find("coder_ai_task.task[0]").app_id) throw new Error("coder_ai_task.task has no app_id");
      // The agent's own env block reaches its scripts too.
      const agent = find("coder_agent.main");
      agentEnv = Object.fromEntries(Object.entries((agent.env as Record<string, string> | null) ?? {}).map(([k, v]) => [k, String(v)]));
      sessionName = String(parsed.values?.outputs?.goose_session_name?.value ?? "");
      if (!sessionName) throw new Error("the template has no goose_session_name output");
      // Handy for a --keep inspection: the rendered scripts, and wrappers with the agent's env.
      for (const [name, script] of [
        ["start", startScript],
        ["stop", stopScript],
      ] as const) {
        await writeFile(path.join(runDir, `${name}-script.sh`), script);
        const exports = Object.entries(scriptEnv())
          .filter(([k]) => !/(_API_KEY|_API_TOKEN)$/.test(k))
          .map(([k, v]) => `export ${k}=${shellQuote(String(v))}`)
          .join("\n");
        const wrapper = path.join(runDir, `run-${name}.sh`);
        await writeFile(wrapper, `#!/bin/sh\n# Runs the rendered ${name} coder_script as the Coder agent does.\n${exports}\ncd "$HOME"\nexec /bin/sh -c "$(cat ${shellQuote(path.join(runDir, `${name}-script.sh`))})"\n`);
        await chmod(wrapper, 0o755);
      }
      renderMs = Date.now() - t0;
      say(`render: terraform init + apply + show in ${renderMs} ms; start script ${startScript.length} bytes, stop script ${stopScript.length} bytes; session name ${sessionName}`);
    });

    // ---- (c)-(e) first start, conversation, stop -------------------------------------
    say(`start #0: task prompt ${JSON.stringify(prompt.length > 60 ? `${prompt.slice(0, 57)}...` : prompt)}`);
    const first = await step("start: run the start script (cold start with the task prompt)", () => start(0, 0));
    cycles.push(first);
    await step("converse: follow-up message through AgentAPI", async () => {
      const t0 = Date.now();
      await send(FOLLOW_UP);
      first.phases.converse = Date.now() - t0;
      say(`converse #0: follow-up answered in ${first.phases.converse} ms; ${(await messages()).length} message(s) in the chat`);
    });
    await step("stop #0: run the stop script", () => stop(first));

    // ---- (f) restarts ----------------------------------------------------------------
    for (let i = 1; i <= restarts; i++) {
      const previous = cycles[cycles.length - 1] as CycleRecord;
      const cycle = await step(`restart #${i}: run the start script again`, () => start(i, previous.messagesBeforeStop));
      cycles.push(cycle);
      await step(`converse #${i}: message after restart #${i}`, async () => {
        const t0 = Date.now();
        await send(`Restart #${i}: are you still on the same task? Answer in one short sentence.`);
        cycle.phases.converse = Date.now() - t0;
        say(`converse #${i}: answered in ${cycle.phases.converse} ms; ${(await messages()).length} message(s) in the chat`);
      });
      await step(`stop #${i}: run the stop script`, () => stop(cycle));
    }

    leftAfterStop = await processesWithEnv(`HOME=${home}`);

    // ---- (g) prompt deliveries --------------------------------------------------------
    // Counted in Goose's database (user-visible user rows, every session): any
    // user turn that carries the prompt counts, however it arrived (instructions
    // file, typed, pasted). Goose's hidden <turn-context> rows never count.
    const promptDeliveries = await gooseDeliveries(gooseDb(), (text) => text.includes(prompt.trim()));
    const stubUsed = modelStub as ModelStub | null;

    report = {
      ok: false,
      checks: [],
      runDir,
      home,
      kept: Boolean(options.keep),
      port,
      coderUrl: coder.url,
      workspaceId,
      taskId,
      prompt,
      goose: { kind: realGoose ? "real" : "double", path: gooseBin, version: gooseVersion },
      agentapi: { path: agentapi, version: agentapiVersion },
      sessionName,
      cycles,
      provider,
      model,
      modelStub: stubUsed ? { url: stubUsed.url, requests: (await stubUsed.requests()).length } : null,
      promptDeliveries,
      snapshots,
      renderMs,
      totalMs: 0,
      leftAfterStop,
    };
    report.checks = judge(report);
    report.ok = report.checks.every((c) => c.ok);
    return report;
  } catch (error) {
    if (error instanceof LifecycleError) throw error;
    throw new LifecycleError(current, (error as Error)?.message ?? String(error));
  } finally {
    // ---- (h) clean up, whatever happened ---------------------------------------------
    await coder.close().catch(() => undefined);
    await (modelStub as ModelStub | null)?.close().catch(() => undefined);
    if (!options.keep) {
      const leftovers = await cleanupRun(runDir, home);
      if (leftovers.length > 0) log(`warning: processes ${leftovers.join(", ")} with HOME=${home} survived SIGKILL`);
    } else {
      log(`kept ${runDir} (home, rendered scripts, run-start.sh / run-stop.sh, ${useModelStub ? "model stub request log" : realGoose ? "goose symlink folder" : "Goose double event log"})`);
    }
    if (report) report.totalMs = Date.now() - began;
  }
}

interface TfModule {
  resources?: Array<{ address: string; values: Record<string, unknown> }>;
  child_modules?: TfModule[];
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

/**
 * Ends every process started with this HOME (AgentAPI, Goose, a script still
 * running) and removes the throwaway folder. Returns the PIDs that survived.
 */
export async function cleanupRun(runDir: string, home: string): Promise<number[]> {
  const left = await killAll(home);
  await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
  return left;
}

/** SIGKILLs every process started with this HOME, and waits (bounded) until they are gone. */
async function killAll(home: string): Promise<number[]> {
  const entry = `HOME=${home}`;
  const deadline = Date.now() + 5000;
  for (;;) {
    const pids = await processesWithEnv(entry);
    if (pids.length === 0 || Date.now() > deadline) return pids;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await delay(50);
  }
}

/** The resume guarantees, each with a one-line verdict. */
export function judge(report: LifecycleReport): Check[] {
  const { cycles } = report;
  const checks: Check[] = [];
  const ids = cycles.map((c) => c.sessionId);
  const sameId = ids[0] !== null && ids.every((id) => id === ids[0]);
  checks.push({
    name: "same Goose session resumed by name on every restart",
    ok: sameId && cycles.every((c, i) => c.mode === (i === 0 ? "cold" : "warm") && c.sessionsWithName === 1),
    skipped: cycles.length < 2,
    detail:
      `modes ${cycles.map((c) => c.mode).join(", ")}; session ids ${ids.map((id) => id ?? "none").join(", ")}` +
      (cycles.some((c) => c.sessionsWithName > 1) ? `; sessions named ${report.sessionName}: ${cycles.map((c) => c.sessionsWithName).join(", ")}` : ""),
  });
  const restored = cycles.slice(1).map((c, i) => ({ before: (cycles[i] as CycleRecord).messagesBeforeStop, after: c.messagesAfterStart, grown: c.messagesBeforeStop }));
  checks.push({
    name: "chat history restored after every restart, and only grows",
    ok: restored.every((r) => r.after === r.before && r.grown > r.after) && (cycles[0]?.messagesBeforeStop ?? 0) > 0,
    skipped: restored.length === 0,
    detail: restored.length === 0 ? "no restart" : restored.map((r, i) => `#${i + 1}: ${r.before} before stop -> ${r.after} after restart -> ${r.grown}`).join("; "),
  });
  checks.push({ name: "task prompt delivered exactly once", ok: report.promptDeliveries === 1, detail: `delivered ${report.promptDeliveries} time(s) (user messages in Goose's database)` });
  const snapOk = cycles.every((c) => c.snapshot && c.snapshot.messages > 0 && c.snapshot.tokenMatched && c.snapshot.taskId === report.taskId && c.snapshot.format === "agentapi");
  checks.push({
    name: "task log snapshot posted on every stop",
    ok: snapOk,
    detail: cycles.map((c) => (c.snapshot ? `#${c.index}: ${c.snapshot.messages} msg, ${c.snapshot.bytes} B${c.snapshot.tokenMatched ? "" : ", wrong token"}` : `#${c.index}: none`)).join("; "),
  });
  const graceful = cycles.map((c) => c.stopLines.some((l) => l.includes("Goose exited on /exit")) && !c.stopLines.some((l) => /SIGTERM|SIGKILL/.test(l)));
  checks.push({
    name: "every stop graceful: Goose exited by itself on /exit, nothing killed",
    ok: graceful.every(Boolean),
    detail: cycles.map((c, i) => `#${c.index}: ${graceful[i] ? "/exit" : "fallback (see the stop lines)"}`).join("; "),
  });
  checks.push({
    name: "nothing left running after the stop script",
    ok: report.leftAfterStop.length === 0,
    detail: report.leftAfterStop.length === 0 ? "no process with the workspace's HOME" : `PIDs ${report.leftAfterStop.join(", ")}`,
  });
  return checks;
}

// Runs the module the way Coder does: `terraform apply` with the real coder
// provider renders the coder_scripts, and each script runs as `/bin/sh -c`
// in a throwaway HOME, against real AgentAPI binaries and the Goose double,
// or a real Goose when GOOSE_BIN=/abs/path/to/goose is set (then with a local
// model stub, test/model-stub, as its OpenAI provider).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants as fsConstants, existsSync, mkdirSync, mkdtempSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";
import { startModelStub, type ModelStub } from "../model-stub/server.js";
import { gooseSessionsDb as moduleSessionsDb } from "../../src/goose-sessions.js";

/** The folder with package.json and test/goose-double, from this file upwards (also right from a bundle in .tmp/). */
function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json")) && existsSync(path.join(dir, "test", "goose-double"))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start, "../..");
  }
}

export const repoRoot = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));
export const gooseDoubleDir = path.join(repoRoot, "test", "goose-double");
const scratch = path.join(repoRoot, ".tmp");

// ---- which Goose: the double, or a real one from GOOSE_BIN ----------------------------

/** The provider and model a real Goose is given: the model stub speaks OpenAI's API. */
export const REAL_GOOSE_PROVIDER = "openai";
export const REAL_GOOSE_MODEL = "gpt-4o";

export interface GooseUnderTest {
  /** True when a real Goose runs (GOOSE_BIN set), false for the test double. */
  real: boolean;
  /** The goose executable: the resolved GOOSE_BIN, or test/goose-double/goose. */
  bin: string;
  /**
   * The folder to put first on PATH; it holds an executable named `goose`: the
   * double's folder, or, for a real Goose, .tmp/goose-bin-<hash>, a folder of
   * its own holding only a `goose` symlink to GOOSE_BIN (nothing else next to
   * that binary lands on PATH, and the binary's file name does not matter).
   */
  pathDir: string;
  /** goose_provider / goose_model a real Goose needs ("openai" / "gpt-4o"); null with the double. */
  provider: string | null;
  model: string | null;
  /**
   * The Terraform variables to pass: the caller's, with goose_provider and
   * goose_model set to openai / gpt-4o for a real Goose; unchanged with the double.
   */
  vars<T extends object>(callerVars?: T): T;
}

const underTest = new Map<string, GooseUnderTest>();

/**
 * Checks that `bin` is an executable file, then returns a folder under
 * `parent` holding only a `goose` symlink to it, for the front of PATH: a new
 * private one, or with `reuseName`, `parent/reuseName`, made once and shared
 * by later calls (and processes) for the same binary.
 */
export function linkGoose(bin: string, parent: string, reuseName?: string): string {
  const target = path.resolve(bin);
  try {
    if (!statSync(target).isFile()) throw new Error("not a file");
    accessSync(target, fsConstants.X_OK);
  } catch (error) {
    throw new Error(`${target} is not an executable goose (${(error as Error).message}); unset GOOSE_BIN to use the Goose test double.`);
  }
  const linksTo = (dir: string) => {
    try {
      return readlinkSync(path.join(dir, "goose")) === target;
    } catch {
      return false;
    }
  };
  mkdirSync(parent, { recursive: true });
  const shared = reuseName ? path.join(parent, reuseName) : null;
  if (shared && linksTo(shared)) return shared;
  const fresh = mkdtempSync(path.join(parent, "goose-bin-"));
  symlinkSync(target, path.join(fresh, "goose"));
  if (!shared) return fresh;
  try {
    renameSync(fresh, shared);
  } catch {
    // Another process made it first (or something else is in the way).
    rmSync(fresh, { recursive: true, force: true });
  }
  if (!linksTo(shared)) throw new Error(`${shared} exists but holds no goose symlink to ${target}; remove it`);
  return shared;
}

/**
 * Which Goose the tests and the lifecycle run: a real one when `bin` (default:
 * env GOOSE_BIN) is set, else the test double. Memoized per binary; the
 * symlink folder is .tmp/goose-bin-<hash>, shared by every run with that binary.
 */
export function gooseUnderTest(bin: string | undefined = process.env.GOOSE_BIN): GooseUnderTest {
  const key = bin ? path.resolve(bin) : "";
  const known = underTest.get(key);
  if (known) return known;
  let found: GooseUnderTest;
  if (!key) {
    found = {
      real: false,
      bin: path.join(gooseDoubleDir, "goose"),
      pathDir: gooseDoubleDir,
      provider: null,
      model: null,
      vars: <T extends object>(callerVars?: T) => ({ ...(callerVars ?? {}) }) as T,
    };
  } else {
    // One folder per binary, reused across runs: .tmp/goose-bin-<hash of its path>.
    const pathDir = linkGoose(key, scratch, `goose-bin-${createHash("sha256").update(key).digest("hex").slice(0, 12)}`);
    found = {
      real: true,
      bin: key,
      pathDir,
      provider: REAL_GOOSE_PROVIDER,
      model: REAL_GOOSE_MODEL,
      vars: <T extends object>(callerVars?: T) => ({ ...(callerVars ?? {}), goose_provider: REAL_GOOSE_PROVIDER, goose_model: REAL_GOOSE_MODEL }) as T,
    };
  }
  underTest.set(key, found);
  return found;
}

// ---- Goose's own database: what was delivered and answered ------------------------------

/** Where Goose keeps its sessions database for this environment: the module's own rule (GOOSE_PATH_ROOT, XDG_DATA_HOME, HOME). */
export function gooseSessionsDb(env: NodeJS.ProcessEnv): string {
  return moduleSessionsDb(env, env.HOME ?? os.homedir());
}

/**
 * Runs one SELECT on Goose's database with the sqlite3 CLI, read-only
 * (`-readonly`, a `mode=ro` URI): the database is never written. (SQLite may
 * create the empty -wal/-shm companions a WAL reader needs.) No database yet,
 * or no tables yet: no rows. The SQL must hold no test data: filter in code.
 */
async function queryGooseDb(db: string, sql: string): Promise<Array<Record<string, unknown>>> {
  if (!existsSync(db)) return [];
  const uri = `file:${db.split("/").map(encodeURIComponent).join("/")}?mode=ro`;
  let result: RunResult;
  try {
    result = await run("sqlite3", ["-readonly", "-json", "-cmd", ".timeout 10000", uri, sql], { timeoutMs: 30_000 });
  } catch (error) {
    throw new Error(`cannot run the sqlite3 CLI to read ${db} (install it, e.g. apt-get install sqlite3): ${(error as Error).message}`);
  }
  if (result.code !== 0) {
    if (/no such table/i.test(result.stderr)) return [];
    throw new Error(`sqlite3 could not read ${db} (exit ${result.code}): ${result.stderr.trim()}`);
  }
  const out = result.stdout.trim();
  return out === "" ? [] : (JSON.parse(out) as Array<Record<string, unknown>>);
}

export interface GooseMessage {
  id: number;
  sessionId: string;
  role: string;
  /** The text parts of content_json, joined with "\n" ("" for a message with no text, such as a tool result). */
  text: string;
  /** False for rows Goose hides from the user (metadata_json `$.userVisible` false: its `<turn-context>` rows). */
  userVisible: boolean;
}

function contentText(json: unknown): string {
  try {
    const content = JSON.parse(String(json)) as unknown;
    if (!Array.isArray(content)) return typeof content === "string" ? content : "";
    return content
      .filter((part) => part && typeof part === "object" && part.type === "text" && typeof part.text === "string")
      .map((part) => part.text as string)
      .join("\n");
  } catch {
    return "";
  }
}

function userVisible(json: unknown): boolean {
  if (json === null || json === undefined) return true;
  try {
    return (JSON.parse(String(json)) as { userVisible?: unknown } | null)?.userVisible !== false;
  } catch {
    return true;
  }
}

/** Every message row across all sessions (optionally one role), oldest first. */
export async function gooseMessages(db: string, role?: "user" | "assistant"): Promise<GooseMessage[]> {
  const where = role === undefined ? "" : ` WHERE role = '${role === "user" ? "user" : "assistant"}'`;
  const rows = await queryGooseDb(db, `SELECT id, session_id, role, content_json, metadata_json FROM messages${where} ORDER BY id`);
  return rows.map((r) => ({
    id: Number(r.id),
    sessionId: String(r.session_id),
    role: String(r.role),
    text: contentText(r.content_json),
    userVisible: userVisible(r.metadata_json),
  }));
}

/**
 * How many user-visible `role='user'` rows, across all sessions, carry this
 * text: equal to `match`, or accepted by it when it is a function. Goose writes
 * these rows when Enter is pressed; its hidden `<turn-context>` rows never count.
 */
export async function gooseDeliveries(db: string, match: string | ((text: string) => boolean)): Promise<number> {
  const accepts = typeof match === "string" ? (text: string) => text === match : match;
  return (await gooseMessages(db, "user")).filter((m) => m.userVisible && accepts(m.text)).length;
}

/** How many `role='assistant'` rows there are, across all sessions (Goose writes one when a turn ends). */
export async function gooseReplies(db: string): Promise<number> {
  const [row] = await queryGooseDb(db, "SELECT COUNT(*) AS n FROM messages WHERE role = 'assistant'");
  return Number(row?.n ?? 0);
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through \`npm test\` (or source .tools/env.sh after tools/setup.sh).`);
  return value;
}

export const tools = {
  get terraform() {
    return required("TF");
  },
  get agentapiNew() {
    return required("AGENTAPI_BIN_NEW");
  },
  get agentapiNewVersion() {
    return required("AGENTAPI_VERSION_NEW");
  },
  get agentapiOld() {
    return required("AGENTAPI_BIN_OLD");
  },
  get agentapiOldVersion() {
    return required("AGENTAPI_VERSION_OLD");
  },
};

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export function run(command: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
    child.on("error", reject);
    // "close", not "exit": a script that leaves a child holding its output
    // would keep the Coder agent waiting, and keeps this promise waiting too.
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, ms: Date.now() - started });
    });
    // A script that exits before reading its input closes the pipe.
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function scratchDir(prefix: string): Promise<string> {
  await mkdir(scratch, { recursive: true });
  return mkdtemp(path.join(scratch, `${prefix}-`));
}

export interface Rendered {
  start: string;
  stop: string;
  outputs: Record<string, unknown>;
  resources: Array<{ address: string; values: Record<string, any> }>;
}

/** Every resource and data source in `terraform show -json` output, child modules included. */
export function appliedResources(state: any): Rendered["resources"] {
  const resources: Rendered["resources"] = [];
  const walk = (module: any) => {
    for (const r of module?.resources ?? []) resources.push({ address: r.address, values: r.values });
    for (const child of module?.child_modules ?? []) walk(child);
  };
  walk(state?.values?.root_module);
  return resources;
}

/** Polls (no fixed sleeps) until `check` is truthy or the bound passes. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(50);
  }
}

let fixtureDir: string | null = null;

/**
 * Applies a template that uses the module by local path, written as JSON so
 * any value (hostile strings included) is passed as data. Terraform runs with
 * the Coder agent's environment variables that the provider reads.
 */
export async function renderModule(vars: Record<string, unknown>, coderEnv: Record<string, string> = {}): Promise<Rendered> {
  if (!fixtureDir) {
    fixtureDir = await scratchDir("tf");
  }
  const config = {
    terraform: { required_providers: { coder: { source: "coder/coder" } } },
    module: { goose: { source: repoRoot, ...vars } },
    output: {
      task_app_id: { value: "${module.goose.task_app_id}" },
      session_name: { value: "${module.goose.session_name}" },
    },
  };
  await writeFile(path.join(fixtureDir, "main.tf.json"), JSON.stringify(config, null, 2));
  const env = { ...process.env, ...coderEnv, TF_IN_AUTOMATION: "1" };
  if (!(await readdir(fixtureDir)).includes(".terraform")) {
    const init = await run(tools.terraform, ["init", "-input=false", "-no-color"], { cwd: fixtureDir, env });
    if (init.code !== 0) throw new Error(`terraform init failed:\n${init.stdout}\n${init.stderr}`);
  }
  const stateFile = path.join(fixtureDir, `state-${Date.now()}-${Math.random().toString(36).slice(2)}.tfstate`);
  const apply = await run(tools.terraform, ["apply", "-auto-approve", "-input=false", "-no-color", `-state=${stateFile}`], { cwd: fixtureDir, env });
  if (apply.code !== 0) throw new Error(`terraform apply failed:\n${apply.stdout}\n${apply.stderr}`);
  const show = await run(tools.terraform, ["show", "-json", "-no-color", stateFile], { cwd: fixtureDir, env });
  if (show.code !== 0) throw new Error(`terraform show failed:\n${show.stderr}`);
  await rm(stateFile, { force: true });
  const state = JSON.parse(show.stdout);
  const resources = appliedResources(state);
  const script = (name: string) => {
    const found = resources.find((r) => r.address === `module.goose.module.agentapi.coder_script.${name}`);
    if (!found) throw new Error(`no coder_script.${name} in the applied state`);
    return String(found.values.script);
  };
  const outputs = Object.fromEntries(Object.entries(state.values?.outputs ?? {}).map(([k, v]: [string, any]) => [k, v.value]));
  return { start: script("start"), stop: script("stop"), outputs, resources };
}

/**
 * A throwaway workspace: its own HOME and port, and the Goose under test
 * (see gooseUnderTest: the double, or GOOSE_BIN with a model stub of its own).
 */
export class Workspace {
  readonly home: string;
  readonly port: number;
  /** The double's event log (GOOSE_DOUBLE_EVENT_LOG); a real Goose writes none. */
  readonly eventLog: string;
  readonly moduleDir: string;
  /** The Goose this workspace runs. */
  readonly goose: GooseUnderTest;
  private extraEnv: Record<string, string> = {};
  private stub: ModelStub | null = null;
  private stubStarting: Promise<ModelStub> | null = null;

  private constructor(home: string, port: number, goose: GooseUnderTest) {
    this.home = home;
    this.port = port;
    this.goose = goose;
    this.eventLog = path.join(home, "goose-double-events.jsonl");
    this.moduleDir = path.join(home, ".coder-modules", "coder", "goose");
  }

  static async create(): Promise<Workspace> {
    const ws = new Workspace(await scratchDir("home"), await freePort(), gooseUnderTest());
    // env() is synchronous: a real Goose's model stub must be listening before it is called.
    if (ws.goose.real) await ws.modelStub();
    return ws;
  }

  /**
   * The model stub a real Goose talks to (started once, on first use; closed by
   * cleanup()); null with the double, which never calls a model.
   */
  async modelStub(): Promise<ModelStub | null> {
    if (!this.goose.real) return null;
    this.stubStarting ??= startModelStub({ model: REAL_GOOSE_MODEL, logFile: path.join(this.home, "model-stub-requests.jsonl") }).then((stub) => (this.stub = stub));
    return this.stubStarting;
  }

  setEnv(values: Record<string, string>): void {
    Object.assign(this.extraEnv, values);
  }

  /**
   * The environment a Coder agent gives its scripts: the chosen AgentAPI and
   * the Goose under test on PATH; with a real Goose, OPENAI_HOST and
   * OPENAI_API_KEY for its model stub. setEnv() values come last.
   */
  env(agentapiBinary: string = tools.agentapiNew): NodeJS.ProcessEnv {
    const goose: Record<string, string> = this.goose.real
      ? this.stub
        ? { OPENAI_HOST: this.stub.url, OPENAI_API_KEY: "model-stub-key" }
        : {}
      : { GOOSE_DOUBLE_EVENT_LOG: this.eventLog };
    return {
      HOME: this.home,
      USER: process.env.USER ?? "coder",
      PATH: [this.goose.pathDir, path.dirname(agentapiBinary), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
      LANG: "C.UTF-8",
      ...goose,
      ...this.extraEnv,
    };
  }

  runScript(script: string, agentapiBinary?: string, timeoutMs = 120_000): Promise<RunResult> {
    return run("/bin/sh", ["-c", script], { cwd: this.home, env: this.env(agentapiBinary), timeoutMs });
  }

  /**
   * The Goose double's event log. Double-only: a real Goose (GOOSE_BIN) writes
   * none, so this is [] there. To count deliveries and replies in a way that
   * holds for both, use deliveries() / replies(), which read Goose's database.
   */
  async events(): Promise<Array<Record<string, any>>> {
    const text = await readFile(this.eventLog, "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
  }

  /** Goose's sessions database for this workspace's environment. */
  get gooseDb(): string {
    return gooseSessionsDb(this.env());
  }

  /**
   * How many times Goose received this exact text (or text `match` accepts) as a user message: the
   * user-visible `role='user'` rows with this text in Goose's database, across
   * all sessions (hidden `<turn-context>` rows do not count).
   */
  async deliveries(match: string | ((text: string) => boolean)): Promise<number> {
    return gooseDeliveries(this.gooseDb, match);
  }

  /** Completed Goose turns so far: `role='assistant'` rows in Goose's database (written only when a turn ends). */
  async replies(): Promise<number> {
    return gooseReplies(this.gooseDb);
  }

  url(route: string): string {
    return `http://127.0.0.1:${this.port}${route}`;
  }

  async status(): Promise<string | null> {
    try {
      const response = await fetch(this.url("/status"), { signal: AbortSignal.timeout(2000) });
      return ((await response.json()) as { status: string }).status;
    } catch {
      return null;
    }
  }

  async messages(): Promise<Array<{ id: number; content: string; role: string }>> {
    const response = await fetch(this.url("/messages"), { signal: AbortSignal.timeout(5000) });
    return ((await response.json()) as { messages: Array<{ id: number; content: string; role: string }> }).messages;
  }

  waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
    return waitFor(what, check, timeoutMs);
  }

  async waitStable(timeoutMs = 60_000): Promise<void> {
    await this.waitFor("AgentAPI status stable", async () => (await this.status()) === "stable", timeoutMs);
  }

  /** Sends a chat message the way the dashboard does and waits for Goose's reply to settle. */
  async send(content: string): Promise<void> {
    await this.waitStable();
    const repliesBefore = await this.replies();
    const response = await fetch(this.url("/message"), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ content, type: "user" }),
      signal: AbortSignal.timeout(60_000),
    });
    if (!response.ok) throw new Error(`POST /message answered ${response.status}: ${await response.text()}`);
    await this.waitFor(`Goose's reply to ${JSON.stringify(content.slice(0, 40))}`, async () => (await this.replies()) > repliesBefore);
    await this.waitStable();
  }

  async readModuleFile(name: string): Promise<string | null> {
    return readFile(path.join(this.moduleDir, name), "utf8").catch(() => null);
  }

  /** Every live process started with this HOME (AgentAPI, Goose), for leak checks and clean-up. */
  async processes(): Promise<number[]> {
    return processesWithEnv(`HOME=${this.home}`);
  }

  /** SIGKILLs every process with this HOME, then closes the model stub (if one was started). */
  async cleanup(): Promise<void> {
    for (const pid of await this.processes()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const stub = this.stubStarting;
    this.stubStarting = null;
    this.stub = null;
    if (stub) await (await stub.catch(() => null))?.close();
  }
}

export async function processesWithEnv(entry: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    const zombie = stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
    if (!zombie && environ.split("\0").includes(entry)) pids.push(Number(name));
  }
  return pids;
}

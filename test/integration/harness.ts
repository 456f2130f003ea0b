// Runs the module the way Coder does: `terraform apply` with the real coder
// provider renders the coder_scripts, and each script runs as `/bin/sh -c`
// in a throwaway HOME, against real AgentAPI binaries and the Goose double.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const gooseDoubleDir = path.join(repoRoot, "test", "goose-double");
const scratch = path.join(repoRoot, ".tmp");

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

/** A throwaway workspace: its own HOME, port and Goose double event log. */
export class Workspace {
  readonly home: string;
  readonly port: number;
  readonly eventLog: string;
  readonly moduleDir: string;
  private extraEnv: Record<string, string> = {};

  private constructor(home: string, port: number) {
    this.home = home;
    this.port = port;
    this.eventLog = path.join(home, "goose-double-events.jsonl");
    this.moduleDir = path.join(home, ".coder-modules", "coder", "goose");
  }

  static async create(): Promise<Workspace> {
    return new Workspace(await scratchDir("home"), await freePort());
  }

  setEnv(values: Record<string, string>): void {
    Object.assign(this.extraEnv, values);
  }

  /** The environment a Coder agent gives its scripts, with the chosen AgentAPI and the Goose double on PATH. */
  env(agentapiBinary: string = tools.agentapiNew): NodeJS.ProcessEnv {
    return {
      HOME: this.home,
      USER: process.env.USER ?? "coder",
      PATH: [gooseDoubleDir, path.dirname(agentapiBinary), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
      LANG: "C.UTF-8",
      GOOSE_DOUBLE_EVENT_LOG: this.eventLog,
      ...this.extraEnv,
    };
  }

  runScript(script: string, agentapiBinary?: string, timeoutMs = 120_000): Promise<RunResult> {
    return run("/bin/sh", ["-c", script], { cwd: this.home, env: this.env(agentapiBinary), timeoutMs });
  }

  async events(): Promise<Array<Record<string, any>>> {
    const text = await readFile(this.eventLog, "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
  }

  /** How many times Goose received this exact text as a user message. */
  async deliveries(text: string): Promise<number> {
    return (await this.events()).filter((e) => e.event === "user_message" && e.text === text).length;
  }

  /** Completed Goose turns so far (Goose stores a reply only when its turn ends). */
  async replies(): Promise<number> {
    return (await this.events()).filter((e) => e.event === "assistant_message").length;
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

  async cleanup(): Promise<void> {
    for (const pid of await this.processes()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
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

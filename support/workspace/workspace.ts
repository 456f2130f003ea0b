// A throwaway workspace: its own HOME and port, the Goose under test (the
// double, or a real Goose with a model stub of its own), and the ways to look
// at it: its scripts' runs, AgentAPI, Goose's database, its processes.
import { chown, mkdir, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { type ModelStub, startModelStub } from "../model-stub/server.js";
import { AgentApiClient, type ChatMessage } from "./agentapi-client.js";
import { agentStartArgs, baseScriptEnv, runCoderScript, withTemplateAgentEnv } from "./coder-agent.js";
import { type RunResult, run, waitFor } from "./exec.js";
import { type GooseUnderTest, gooseUnderTest } from "./goose.js";
import { gooseDeliveries, gooseReplies, gooseSessionsNamed } from "./goose-db.js";
import { freePort } from "./ports.js";
import { killProcessesWithEnv, processesWithEnv } from "./processes.js";
import { coderCliStandinDir, gooseDoubleDir, scratchDir, tools } from "./repo.js";
import { type ScriptRuntime, scriptRuntime } from "./runtime.js";

export interface WorkspaceOptions {
  /** The HOME to use (made if missing); default a fresh .tmp/home-*. */
  home?: string;
  /** Default: gooseUnderTest(), from GOOSE_BIN. */
  goose?: GooseUnderTest;
  /**
   * For a real Goose: start a local model stub and point Goose at it (the
   * default). false leaves the provider to the environment the caller sets.
   */
  modelStub?: boolean;
  /** The AgentAPI binary scripts find on PATH (default tools.agentapiUnderTest: WORKSPACE_AGENTAPI, else AGENTAPI_BIN_NEW). */
  agentapi?: string;
  /** The JavaScript runtime the scripts find on PATH (default: scriptRuntime(), from WORKSPACE_RUNTIME). */
  runtime?: ScriptRuntime;
  /** The bound for each wait on the agent (default 60 s). */
  agentTimeoutMs?: number;
  /**
   * Another user to run the scripts as (this process must be root), who then
   * owns HOME: a workspace whose root-owned files its user cannot change.
   */
  user?: WorkspaceUser;
}

export interface WorkspaceUser {
  uid: number;
  gid: number;
}

/** `dir` and everything under it given to `user`, links themselves and never what they point at. */
async function chownTree(dir: string, user: WorkspaceUser): Promise<void> {
  await chown(dir, user.uid, user.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(full, user);
    else if (!entry.isSymbolicLink()) await chown(full, user.uid, user.gid);
  }
}

export class Workspace {
  /** The double's event log (GOOSE_DOUBLE_EVENT_LOG); a real Goose writes none. */
  readonly eventLog: string;
  readonly moduleDir: string;
  readonly agentapi: AgentApiClient;
  private readonly extraEnv: Record<string, string> = {};
  private readonly templateAgentEnv: Record<string, string> = {};

  private constructor(
    readonly home: string,
    readonly port: number,
    readonly goose: GooseUnderTest,
    readonly runtime: ScriptRuntime,
    private readonly agentapiBinary: string,
    /** The model stub a real Goose talks to; null with the double, or with the provider left to the caller. */
    private stub: ModelStub | null,
    agentTimeoutMs: number,
    readonly user: WorkspaceUser | null,
  ) {
    this.eventLog = path.join(home, "goose-double-events.jsonl");
    this.moduleDir = path.join(home, ".coder-modules", "coder", "goose");
    this.agentapi = new AgentApiClient(port, path.join(this.moduleDir, "logs", "agentapi.log"), agentTimeoutMs);
  }

  static async create(opts: WorkspaceOptions = {}): Promise<Workspace> {
    const home = opts.home ?? (await scratchDir("home"));
    await mkdir(home, { recursive: true });
    const goose = opts.goose ?? gooseUnderTest();
    const stub =
      goose.real && opts.modelStub !== false
        ? await startModelStub({
            model: goose.model ?? undefined,
            logFile: path.join(home, "model-stub-requests.jsonl"),
          })
        : null;
    return new Workspace(
      home,
      await freePort(),
      goose,
      opts.runtime ?? (await scriptRuntime()),
      opts.agentapi ?? tools.agentapiUnderTest,
      stub,
      opts.agentTimeoutMs ?? 60_000,
      opts.user ?? null,
    );
  }

  /** The model stub a real Goose talks to; null with the double, which never calls a model. */
  get modelStub(): ModelStub | null {
    return this.stub;
  }

  setEnv(values: Record<string, string>): void {
    Object.assign(this.extraEnv, values);
  }

  /** The template's coder_agent `env` (withTemplateAgentEnv): every script run from now on gets it. */
  setAgentEnv(values: Record<string, string>): void {
    Object.assign(this.templateAgentEnv, values);
  }

  /**
   * The environment a Coder agent gives its scripts: the Goose under test,
   * AgentAPI and the Coder CLI (its stand-in) on PATH, then the runtime's folders; the double's event log, or the model stub's
   * OPENAI_HOST and OPENAI_API_KEY, the template's coder_agent env
   * (setAgentEnv). setEnv() values come last.
   */
  env(agentapiBinary = this.agentapiBinary): NodeJS.ProcessEnv {
    const goose: Record<string, string> = this.goose.real
      ? this.stub
        ? { OPENAI_HOST: this.stub.url, OPENAI_API_KEY: "model-stub-key" }
        : {}
      : // The facts folder by name: a copy of the double installed from a tarball has none beside it.
        {
          GOOSE_DOUBLE_EVENT_LOG: this.eventLog,
          GOOSE_DOUBLE_FACTS_DIR: path.join(gooseDoubleDir, "..", "goose-facts"),
        };
    const base = baseScriptEnv(this.home, [
      this.goose.pathDir,
      path.dirname(agentapiBinary),
      coderCliStandinDir,
      ...this.runtime.pathDirs,
    ]);
    return { ...withTemplateAgentEnv({ ...base, ...goose }, this.templateAgentEnv), ...this.extraEnv };
  }

  async runScript(
    script: string,
    agentapiBinary?: string,
    timeoutMs = 120_000,
    args: string[] = [],
  ): Promise<RunResult> {
    // What the test wrote there since is the user's too, as the files of a home are.
    if (this.user) await chownTree(this.home, this.user);
    const user = this.user ?? undefined;
    return runCoderScript(script, { home: this.home, env: this.env(agentapiBinary), timeoutMs, user, args });
  }

  /** The install and start coder_scripts as the agent runs them at a start (agentStartArgs), with both outputs. */
  runStart(rendered: { install: string; start: string }, agentapiBinary?: string, timeoutMs = 120_000) {
    const [, agent, ...args] = agentStartArgs(rendered);
    return this.runScript(agent as string, agentapiBinary, timeoutMs, args);
  }

  /**
   * The Goose double's event log. Double-only: a real Goose writes none, so
   * this is [] there. To count deliveries and replies in a way that holds for
   * both, use deliveries() / replies(), which read Goose's database.
   */
  // biome-ignore lint/suspicious/noExplicitAny: free-form events, one shape each, that tests probe field by field.
  async events(): Promise<Array<Record<string, any>>> {
    const text = await readFile(this.eventLog, "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
  }

  /**
   * Goose's sessions database: ~/.local/share/goose/sessions/sessions.db, as
   * Goose keeps it when neither GOOSE_PATH_ROOT nor XDG_DATA_HOME is set
   * (observed with Goose 1.46.1), and this workspace sets neither.
   */
  get gooseDb(): string {
    const moved = ["GOOSE_PATH_ROOT", "XDG_DATA_HOME"].filter((name) => this.env()[name]);
    if (moved.length > 0) throw new Error(`Workspace.gooseDb does not follow ${moved.join(" or ")}`);
    return path.join(this.home, ".local", "share", "goose", "sessions", "sessions.db");
  }

  /** How many times Goose received this text (or text `match` accepts) as a user message, across all sessions. */
  deliveries(match: string | ((text: string) => boolean)): Promise<number> {
    return gooseDeliveries(this.gooseDb, match);
  }

  /** Completed Goose turns so far: `role='assistant'` rows in Goose's database (written only when a turn ends). */
  replies(): Promise<number> {
    return gooseReplies(this.gooseDb);
  }

  /** `goose session list --format json`, run with the workspace's environment. */
  async gooseSessionList(): Promise<string> {
    const result = await run(this.goose.bin, ["session", "list", "--format", "json"], {
      cwd: this.home,
      env: this.env(),
      timeoutMs: 60_000,
    });
    if (result.code !== 0) throw new Error(`goose session list exited ${result.code}: ${result.stderr.trim()}`);
    return result.stdout;
  }

  /** The ids of the sessions named `name`, the one a resume picks first, from Goose's database. */
  sessionsNamed(name: string): Promise<string[]> {
    return gooseSessionsNamed(this.gooseDb, name);
  }

  status(): Promise<string | null> {
    return this.agentapi.status();
  }

  messages(): Promise<ChatMessage[]> {
    return this.agentapi.messages();
  }

  waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
    return waitFor(what, check, timeoutMs);
  }

  waitStable(timeoutMs?: number): Promise<void> {
    return this.agentapi.waitStable(timeoutMs);
  }

  /** Sends a chat message the way the dashboard does and waits until Goose's reply has settled. */
  send(content: string): Promise<void> {
    return this.agentapi.send(content, () => this.replies());
  }

  async readModuleFile(name: string): Promise<string | null> {
    return readFile(path.join(this.moduleDir, name), "utf8").catch(() => null);
  }

  /** Every live process started with this HOME (AgentAPI, Goose, a script still running). */
  processes(): Promise<number[]> {
    return processesWithEnv(`HOME=${this.home}`);
  }

  async closeModelStub(): Promise<void> {
    const stub = this.stub;
    this.stub = null;
    await stub?.close();
  }

  /** SIGKILLs every process with this HOME and closes the model stub; returns the PIDs that survived. */
  async cleanup(): Promise<number[]> {
    const left = await killProcessesWithEnv(`HOME=${this.home}`);
    await this.closeModelStub();
    return left;
  }
}

import path from "node:path";
import { gunzipSync } from "node:zlib";
import { FieldError, Fields } from "../lib/json-fields.js";
import { StepError } from "../lib/log.js";

// Goose's permission modes (GooseMode in crates/goose-provider-types/src/goose_mode.rs,
// aaif-goose/goose @ v1.46.1, serialised in snake_case): auto runs every tool
// call, smart_approve asks before the ones it judges sensitive, approve asks
// before each one, chat makes none.
export const GOOSE_MODES = ["auto", "smart_approve", "approve", "chat"] as const;

export type GooseMode = (typeof GOOSE_MODES)[number];

// The settings document each coder_script hands its script: the AgentAPI
// layer's part under "layer" (modules/agentapi/main.tf) and this module's part
// under "agent" (main.tf). Terraform sends only what the script reads; this file
// checks every field and owns every default.

/** Where the module keeps its files in the workspace. */
export interface ModulePaths {
  dir: string;
  logs: string;
  /** AgentAPI's output, appended at each launch (lib/detached.ts). */
  agentapiLog: string;
  scripts: string;
  bin: string;
  stateFile: string;
  pidFile: string;
  launchRecord: string;
  /** What each binary the install asked printed for `--version` (install/version-memo.ts). */
  versionMemo: string;
  promptFile: string;
  /** The PID of the supervisor that restarts AgentAPI, written by the supervisor itself. */
  supervisorPid: string;
  /** AgentAPI's TMPDIR, where each run leaves an upload folder (agentapi/tmp.ts). */
  tmp: string;
  /** The module's Goose config layer, its extension entries (goose/goose-config.ts, extensionsLayer). */
  gooseLayer: string;
}

export interface AgentapiSettings {
  install: boolean;
  version: string;
  downloadUrl: string;
  /** agentapi_sha256: architecture (amd64, arm64) to the release binary's SHA-256; empty when not pinned. */
  sha256: Record<string, string>;
  port: number;
  chatBasePath: string;
  persistence: boolean;
}

export interface GooseSettings {
  install: boolean;
  version: string;
  downloadUrl: string;
  /** goose_sha256: architecture to the release tarball's SHA-256; empty when not pinned. */
  sha256: Record<string, string>;
  /** goose_installer_url; empty means the release tarball from download_url. */
  installerUrl: string;
  provider: string;
  model: string;
  prompt: string;
  systemPrompt: string;
  sessionName: string;
  continue: boolean;
  continueInterruptedTurn: boolean;
  mode: GooseMode;
  appSlug: string;
  extensions: Record<string, Record<string, unknown>>;
  installScript: { pre: string; post: string };
  /** enable_ai_gateway: the gateway's route for the provider, and the variable (a coder_env) that holds the owner's session token. */
  aiGateway: AiGatewaySettings;
  /** agent_firewall: the command Goose runs under (empty: none), $HOME not yet expanded. */
  commandPrefix: string[];
  /** telemetry: Goose's OpenTelemetry export, Coder's identifiers already among the attributes. */
  telemetry: TelemetrySettings;
}

export interface TelemetrySettings {
  enabled: boolean;
  endpoint: string;
  protocol: string;
  headers: Record<string, string>;
  resourceAttributes: Record<string, string>;
}

export interface AiGatewaySettings {
  enabled: boolean;
  baseUrl: string;
  tokenEnv: string;
}

/** Who may reach AgentAPI: the template's additions and what the defaults are built from (settings/access-lists.ts). */
export interface AccessSettings {
  allowedHosts: string[];
  allowedOrigins: string[];
  accessUrl: string;
  subdomain: boolean;
}

export interface StartConfig {
  /** How the Coder dashboard names the module's scripts ("<name>: Install Script"). */
  displayName: string;
  folder: string;
  /** The Coder task's ID; empty outside a task. It tells a task's prompt from ai_prompt (goose/prompt-source.ts). */
  taskId: string;
  /** Leave a supervisor running that restarts AgentAPI when it exits without a stop. */
  supervise: boolean;
  paths: ModulePaths;
  agentapi: AgentapiSettings;
  goose: GooseSettings;
  access: AccessSettings;
}

export interface StopConfig {
  paths: ModulePaths;
  port: number;
  task: { enabled: boolean; id: string; logSnapshot: boolean };
  /** The template's bounds for a running turn and for AgentAPI's exit after SIGTERM. */
  bounds: { turnMs: number; termMs: number };
  gooseMode: GooseMode;
}

const ENV_NAME = "CODER_MODULE_SETTINGS";
const SCRIPT_ENV_NAME = "CODER_MODULE_SCRIPT";
const STOPS_ENV_NAME = "CODER_MODULE_STOPS_SEEN";
const RUN_ENV_NAME = "CODER_MODULE_RUN";
const MAX_PORT = 65535;
// variables.tf accepts up to 300 s for each stop bound.
const MAX_BOUND_MS = 300_000;

function modulePaths(home: string, layer: Fields): ModulePaths {
  const dir = path.join(home, layer.string("module_folder"));
  const stateFile = layer.path("state_file", path.join(dir, "agentapi-state.json"));
  return {
    dir,
    logs: path.join(dir, "logs"),
    agentapiLog: path.join(dir, "logs", "agentapi.log"),
    scripts: path.join(dir, "scripts"),
    bin: path.join(dir, "bin"),
    stateFile,
    pidFile: layer.path("pid_file", path.join(dir, "agentapi.pid")),
    launchRecord: path.join(dir, "agentapi-launch.json"),
    versionMemo: path.join(dir, "versions.json"),
    promptFile: path.join(dir, "first-prompt.md"),
    supervisorPid: path.join(dir, "supervisor.pid"),
    tmp: path.join(dir, "tmp"),
    gooseLayer: path.join(dir, "goose-config.json"),
  };
}

function parseGoose(goose: Fields): GooseSettings {
  const scripts = goose.object("install_script");
  const gateway = goose.object("ai_gateway");
  const telemetry = goose.object("telemetry");
  return {
    install: goose.boolean("install"),
    version: goose.string("version"),
    downloadUrl: goose.string("download_url"),
    sha256: goose.stringMap("sha256"),
    installerUrl: goose.string("installer_url"),
    provider: goose.string("provider"),
    model: goose.string("model"),
    prompt: goose.string("prompt"),
    systemPrompt: goose.string("system_prompt"),
    sessionName: goose.string("session_name"),
    continue: goose.boolean("continue"),
    continueInterruptedTurn: goose.boolean("continue_interrupted_turn"),
    mode: goose.oneOf("mode", GOOSE_MODES),
    appSlug: goose.string("app_slug"),
    extensions: goose.objectMap("extensions"),
    installScript: { pre: scripts.string("pre"), post: scripts.string("post") },
    aiGateway: {
      enabled: gateway.boolean("enabled"),
      baseUrl: gateway.string("base_url"),
      tokenEnv: gateway.string("token_env"),
    },
    commandPrefix: goose.stringList("command_prefix"),
    telemetry: {
      enabled: telemetry.boolean("enabled"),
      endpoint: telemetry.string("endpoint"),
      protocol: telemetry.string("protocol"),
      headers: telemetry.stringMap("headers"),
      resourceAttributes: telemetry.stringMap("resource_attributes"),
    },
  };
}

function parseAccess(access: Fields): AccessSettings {
  return {
    allowedHosts: access.stringList("allowed_hosts"),
    allowedOrigins: access.stringList("allowed_origins"),
    accessUrl: access.string("access_url"),
    subdomain: access.boolean("subdomain"),
  };
}

function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    throw new StepError(
      `the module settings are not valid: ${error.message}. The coder_script and its settings come from different module versions, or were edited; re-apply the template so the script is rendered again.`,
    );
  }
}

export function parseStartConfig(document: unknown, home: string): StartConfig {
  return parsed(() => {
    const root = Fields.of(document, "settings");
    const layer = root.object("layer");
    const agent = root.object("agent");
    const agentapi = agent.object("agentapi");
    return {
      displayName: layer.string("display_name"),
      folder: agent.path("folder", home),
      taskId: layer.object("task").string("id"),
      supervise: agent.boolean("supervise"),
      paths: modulePaths(home, layer),
      agentapi: {
        install: agentapi.boolean("install"),
        version: agentapi.string("version"),
        downloadUrl: agentapi.string("download_url"),
        sha256: agentapi.stringMap("sha256"),
        port: layer.integer("port", 1, MAX_PORT),
        chatBasePath: layer.string("chat_base_path"),
        persistence: layer.boolean("persistence"),
      },
      goose: parseGoose(agent.object("goose")),
      access: parseAccess(agent.object("access")),
    };
  });
}

export function parseStopConfig(document: unknown, home: string): StopConfig {
  return parsed(() => {
    const root = Fields.of(document, "settings");
    const layer = root.object("layer");
    const agent = root.object("agent");
    const task = layer.object("task");
    const bounds = agent.object("timeouts");
    return {
      paths: modulePaths(home, layer),
      port: layer.integer("port", 1, MAX_PORT),
      task: { enabled: task.boolean("enabled"), id: task.string("id"), logSnapshot: agent.boolean("log_snapshot") },
      bounds: {
        turnMs: bounds.integer("turn_ms", 0, MAX_BOUND_MS),
        termMs: bounds.integer("term_ms", 0, MAX_BOUND_MS),
      },
      gooseMode: agent.oneOf("goose_mode", GOOSE_MODES),
    };
  });
}

/**
 * A copy of the start's settings document without the prompt, for the
 * supervisor it leaves running: a restart never delivers the prompt again, and
 * the supervisor's environment must not carry it.
 */
export function settingsWithoutPrompt(document: unknown): unknown {
  const copy = structuredClone(document) as { agent: { goose: { prompt: string } } };
  copy.agent.goose.prompt = "";
  return copy;
}

export function homeDir(): string {
  const home = process.env.HOME;
  if (!home)
    throw new StepError(
      "HOME is not set; the module keeps its files under $HOME/.coder-modules and cannot run without it.",
    );
  return home;
}

/**
 * What the coder_script passes its script, both taken from the environment in
 * one step and removed from it at once, so no child inherits the prompt or the
 * code: the settings document (CODER_MODULE_SETTINGS, gzip+base64 JSON; it
 * comes through the environment, not a file, so a stop needs no disk space),
 * and the script's own code (CODER_MODULE_SCRIPT, gzip+base64), with which the
 * start launches helpers running the same code without writing it to disk.
 * `ownScript()` gives that code as passed, once checked to unpack (only a
 * start that launches a helper asks), with the loader the runtime was given
 * (`-e`, run.sh.tftpl) to run it again; null when the wrapper passed either
 * none. `stopsSeen`: the stop
 * count the start's wrapper noted as it began, before the install could end
 * (CODER_MODULE_STOPS_SEEN); null when it passed none. `run`: the agent run
 * whose install the start waits for (CODER_MODULE_RUN, start/install-wait.ts);
 * null when it passed none.
 */
/** The script's own code (gzip+base64) and the loader that runs it (run.sh.tftpl). */
export interface OwnScript {
  code: string;
  loader: string;
}

export function takeScriptInputs(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: string[] = process.execArgv,
): {
  settings: unknown;
  ownScript: () => OwnScript | null;
  stopsSeen: number | null;
  run: string | null;
} {
  const encodedSettings = env[ENV_NAME];
  const encodedScript = env[SCRIPT_ENV_NAME];
  const stops = env[STOPS_ENV_NAME];
  const run = env[RUN_ENV_NAME];
  for (const name of [ENV_NAME, SCRIPT_ENV_NAME, STOPS_ENV_NAME, RUN_ENV_NAME]) delete env[name];
  return {
    settings: decodeSettings(encodedSettings),
    ownScript: () => {
      const at = execArgv.indexOf("-e");
      const loader = at >= 0 ? execArgv[at + 1] : undefined;
      if (loader === undefined || encodedScript === undefined || decodeScript(encodedScript) === null) return null;
      return { code: encodedScript, loader };
    },
    stopsSeen: stops !== undefined && /^[0-9]{1,15}$/.test(stops) ? Number(stops) : null,
    run: run !== undefined && /^[0-9]+\.[0-9]*$/.test(run) ? run : null,
  };
}

function decodeSettings(encoded: string | undefined): unknown {
  if (!encoded)
    throw new StepError(
      `no settings given (${ENV_NAME} is not set); run this script through the module's coder_script.`,
    );
  try {
    return JSON.parse(gunzipSync(Buffer.from(encoded, "base64")).toString("utf8"));
  } catch (error) {
    throw new StepError(
      `cannot read the module settings: ${(error as Error).message}. Re-apply the template so the coder_script is rendered again.`,
    );
  }
}

function decodeScript(encoded: string): Buffer | null {
  if (!encoded) return null;
  try {
    return gunzipSync(Buffer.from(encoded, "base64"));
  } catch {
    return null;
  }
}

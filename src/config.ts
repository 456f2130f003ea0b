import path from "node:path";
import { gunzipSync } from "node:zlib";
import { StepError } from "./log.js";

export interface AgentapiSettings {
  install: boolean;
  version: string;
  download_url: string;
  port: number;
  chat_base_path: string;
  persistence: boolean;
  state_file: string;
  pid_file: string;
}

export interface GooseSettings {
  install: boolean;
  version: string;
  installer_url: string;
  provider: string;
  model: string;
  prompt: string;
  system_prompt: string;
  session_name: string;
  continue: boolean;
  continue_interrupted_turn: boolean;
  app_slug: string;
  extensions: Record<string, unknown>;
  install_script: { pre: string; post: string };
}

export interface StartConfig {
  module_folder: string;
  folder: string;
  agentapi: AgentapiSettings;
  agent: GooseSettings;
}

export interface StopTimeouts {
  save_ms: number;
  turn_ms: number;
  term_ms: number;
  http_ms: number;
  cancel_ms: number;
  exit_ms: number;
}

export interface StopConfig {
  module_folder: string;
  agentapi: AgentapiSettings;
  task: { enabled: boolean; id: string; log_snapshot: boolean };
  /** The template sets the turn and SIGTERM bounds; the stop script has defaults for the rest. */
  timeouts?: Partial<StopTimeouts>;
}

export interface ModulePaths {
  dir: string;
  logs: string;
  scripts: string;
  bin: string;
  stateFile: string;
  stateBackup: string;
  stateOwner: string;
  pidFile: string;
  launchRecord: string;
  promptFile: string;
}

/** Terraform spells the default paths with a literal "$HOME/" prefix. */
export function expandHome(file: string, home: string): string {
  return file.startsWith("$HOME/") ? path.join(home, file.slice("$HOME/".length)) : file;
}

export function resolvePaths(home: string, moduleFolder: string, agentapi: Pick<AgentapiSettings, "state_file" | "pid_file">): ModulePaths {
  const dir = path.join(home, moduleFolder);
  const stateFile = agentapi.state_file ? expandHome(agentapi.state_file, home) : path.join(dir, "agentapi-state.json");
  return {
    dir,
    logs: path.join(dir, "logs"),
    scripts: path.join(dir, "scripts"),
    bin: path.join(dir, "bin"),
    stateFile,
    stateBackup: `${stateFile}.bak`,
    stateOwner: `${stateFile}.owner.json`,
    pidFile: agentapi.pid_file ? expandHome(agentapi.pid_file, home) : path.join(dir, "agentapi.pid"),
    launchRecord: path.join(dir, "agentapi-launch.json"),
    promptFile: path.join(dir, "task-prompt.md"),
  };
}

export function homeDir(): string {
  const home = process.env.HOME;
  if (!home) throw new StepError("HOME is not set; the module keeps its files under $HOME/.coder-modules and cannot run without it.");
  return home;
}

/**
 * The settings the coder_script passes in GOOSE_MODULE_SETTINGS (gzip+base64
 * JSON). They are read from the environment, not a file, so a stop needs no
 * disk space; the variable is removed at once so no child inherits the prompt.
 */
export function readSettings<T>(env: NodeJS.ProcessEnv = process.env): T {
  const encoded = env.GOOSE_MODULE_SETTINGS;
  delete env.GOOSE_MODULE_SETTINGS;
  if (!encoded) throw new StepError("no settings given (GOOSE_MODULE_SETTINGS is not set); run this script through the module's coder_script.");
  try {
    return JSON.parse(gunzipSync(Buffer.from(encoded, "base64")).toString("utf8")) as T;
  } catch (error) {
    throw new StepError(`cannot read the module settings: ${(error as Error).message}. Re-apply the template so the coder_script is rendered again.`);
  }
}

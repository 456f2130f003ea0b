import { agentapiEnv } from "../agentapi/command.js";
import type { GooseMode } from "../settings/config.js";
import { additionalConfigFiles } from "./goose-config.js";
import { CONTINUATION_TEXT } from "./interrupted-turn.js";

/** Goose's type for AgentAPI (`--type`), which picks how AgentAPI reads its screen. */
export const AGENTAPI_TYPE = "goose";

export type StartMode = "cold" | "warm";

/** The session a launch starts: a new one with the module's name, or an existing one by id. */
type NewSession = { mode: "cold"; name: string };
type ResumedSession = { mode: "warm"; id: string };
export type GooseSession = NewSession | ResumedSession;

/**
 * The Goose command line after AgentAPI's `--`.
 *
 * The task prompt goes to Goose as an --instructions file rather than through
 * AgentAPI's initial prompt: Goose stores it as the session's first user
 * message the moment it starts, in the same database the cold/warm probe
 * reads, so "delivered" and "recorded" are one fact. AgentAPI's initial prompt
 * would depend on it recognising Goose's input box and on its state file
 * (absent before v0.12.0) to remember it was sent.
 *
 * A warm start resumes by the id the decision read, not by name: when several
 * sessions share the name, `--resume --name` picks the most recently active,
 * which need not be the one the module decided about (goose/session-records.ts
 * pickNamedSession). `--session-id` and `--name` are one argument group in
 * Goose (Identifier, crates/goose-cli/src/cli.rs at v1.34.0 and v1.46.1), so
 * the resumed session keeps its own name.
 */
export function buildGooseArgs(session: GooseSession, promptFile: string | null, continueTurn = false): string[] {
  // `goose session --resume` sends nothing; `goose run --resume --interactive
  // --text T` adds T as a new user turn and then stays interactive (crates/goose-cli/src/cli.rs
  // handle_run_command in aaif-goose/goose). `--history` reprints the earlier
  // conversation under the banner, so the CLI app shows it after a restart; `run`
  // has no such flag (cli.rs handle_interactive_session and session/mod.rs
  // render_message_history, goose v1.46.1). AgentAPI keeps
  // the restored chat's last agent message until the next user message and diffs
  // later turns from the screen before it, so the reprint does not reach the chat.
  if (session.mode === "warm" && continueTurn)
    return ["run", "--resume", "--session-id", session.id, "--interactive", "--text", CONTINUATION_TEXT];
  if (session.mode === "warm") return ["session", "--resume", "--session-id", session.id, "--history"];
  if (promptFile) return ["run", "--interactive", "--name", session.name, "--instructions", promptFile];
  return ["session", "--name", session.name];
}

/**
 * Environment for AgentAPI and the Goose it starts: the caller's, without any
 * AGENTAPI_* variable of its own, then AgentAPI's (agentapiEnv) and Goose's.
 */
export function buildLaunchEnv(
  base: NodeJS.ProcessEnv,
  opts: {
    chatBasePath: string;
    allowedHosts: string[];
    allowedOrigins: string[];
    provider: string;
    model: string;
    mode: GooseMode;
    pathPrefix: string[];
    /** The AI Gateway's provider variables (gatewayEnv), which replace the template's own. */
    gateway?: Record<string, string> | null;
    /** Goose's OpenTelemetry export (telemetryEnv), which replaces the template's own OTEL_* settings. */
    telemetry?: Record<string, string>;
    /** AgentAPI's own TMPDIR (agentapi/tmp.ts), for the launch; Goose gets the user's back (withUserTmpdir). */
    tmpdir?: string;
    /** The module's Goose config layer (configureGoose), its extension entries. */
    configLayer: string;
  },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !key.startsWith("AGENTAPI_")) env[key] = value;
  }
  env.PATH = [...opts.pathPrefix, base.PATH ?? "/usr/local/bin:/usr/bin:/bin"].join(":");
  Object.assign(env, agentapiEnv(opts));
  env.GOOSE_PROVIDER = opts.provider;
  env.GOOSE_MODEL = opts.model;
  // An interactive Goose under AgentAPI's terminal must not stop to ask what
  // nobody answers: the first run asks about telemetry, and the keyring needs
  // a desktop session. The mode is the template's goose_mode (the approve
  // modes ask in Goose's terminal before tool calls). These go to this
  // process alone, never into config.yaml, which the user's own `goose` reads.
  env.GOOSE_MODE = opts.mode;
  env.GOOSE_TELEMETRY_ENABLED = "false";
  env.GOOSE_DISABLE_KEYRING = "1";
  env.GOOSE_ADDITIONAL_CONFIG_FILES = additionalConfigFiles(opts.configLayer, base.GOOSE_ADDITIONAL_CONFIG_FILES);
  if (opts.tmpdir) env.TMPDIR = opts.tmpdir;
  Object.assign(env, opts.telemetry);
  return opts.gateway ? { ...env, ...opts.gateway } : env;
}

/**
 * The prefix of the command AgentAPI starts (the firewall's, then Goose) run
 * through env(1) so that it gets the user's TMPDIR back, or none when the user
 * had none: AgentAPI runs with the module's own TMPDIR (buildLaunchEnv), and
 * its child inherits AgentAPI's environment (execCmd.Env = os.Environ() in
 * lib/termexec, coder/agentapi @ v0.12.2). env execs the command, so the PID
 * is the command's. env takes every leading NAME=VALUE word as a setting, so a
 * command whose path holds "=" runs without the wrapper, with AgentAPI's TMPDIR.
 */
export function withUserTmpdir(prefix: string[], goose: string, userTmpdir: string | undefined): string[] {
  if ((prefix[0] ?? goose).includes("=")) return prefix;
  // "--" ends env's options, so a command starting with "-" is run (and
  // fails), never read as an option of env's that would drop the firewall.
  return ["env", ...(userTmpdir === undefined ? ["-u", "TMPDIR", "--"] : ["--", `TMPDIR=${userTmpdir}`]), ...prefix];
}

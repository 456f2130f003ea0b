import type { DecidedGate } from "../agentapi/version-gate.js";
import type { Measured } from "../launch/containment.js";
import type { InstalledTools } from "../launch/launch.js";
import { FieldError, Fields } from "../lib/json-fields.js";
import { StepError } from "../lib/log.js";
import {
  homeDir,
  parseStartConfig,
  type StartConfig,
  settingsWithoutPrompt,
  takeScriptInputs,
} from "../settings/config.js";

const DOCUMENT_KIND = "goose-module-supervisor";

/** What the supervisor's helpers run with: the start's settings, binaries and gate. */
export interface SupervisorInputs {
  config: StartConfig;
  tools: InstalledTools;
  gate: DecidedGate;
  /** When that start began. */
  since: number;
  /** The stop count when that start began (lifecycle/stop-request.ts): a stop since then ends the watch. */
  stops: number;
  /**
   * What confines Goose, as that start measured it (launch/containment.ts):
   * each restart launches only while it is unchanged. It lives where the
   * document does, in the supervisor's own memory, never in a file Goose's
   * tool calls could rewrite.
   */
  containment: Measured[];
}

/**
 * What a start hands the supervisor it leaves running: the settings document
 * it was given, without the task prompt, and what it found out (the binaries,
 * the persistence gate). The settings are read again by the same strict
 * reader as the start's (parseStartConfig).
 */
export function supervisorDocument(
  settings: unknown,
  tools: InstalledTools,
  gate: DecidedGate,
  start: { since: number; stops: number; containment: Measured[] },
): unknown {
  const { kind, enabled, version, reason } = gate;
  return {
    kind: DOCUMENT_KIND,
    settings: settingsWithoutPrompt(settings),
    tools,
    gate: { kind, enabled, version, reason },
    ...start,
  };
}

/**
 * A restart resumes the session that was running (the document carries no
 * prompt: settingsWithoutPrompt), and runs no install script; it resumes even
 * with `continue = false`, which asks for a new session per workspace start,
 * not per crash.
 */
function forRestart(config: StartConfig): StartConfig {
  const goose = { ...config.goose, continue: true, installScript: { pre: "", post: "" } };
  return { ...config, goose };
}

function readInputs(document: Fields): Omit<SupervisorInputs, "config"> {
  const tools = document.object("tools");
  const gate = document.object("gate");
  return {
    tools: {
      agentapi: tools.path("agentapi"),
      gooseBin: tools.path("gooseBin"),
      pathPrefix: tools.stringList("pathPrefix"),
    },
    gate: {
      kind: gate.oneOf("kind", ["decided"]),
      enabled: gate.boolean("enabled"),
      version: gate.nullableString("version"),
      reason: gate.string("reason"),
    },
    since: document.integer("since", 0, Number.MAX_SAFE_INTEGER),
    stops: document.integer("stops", 0, Number.MAX_SAFE_INTEGER),
    containment: document.objectList("containment").map((file) => ({
      role: file.string("role"),
      path: file.string("path"),
      state: file.string("state"),
    })),
  };
}

/** The supervisor's document, checked field by field like the settings the start reads. */
export function readSupervisorDocument(env: NodeJS.ProcessEnv = process.env): SupervisorInputs {
  const document = takeScriptInputs(env).settings;
  if ((document as { kind?: unknown } | null)?.kind !== DOCUMENT_KIND)
    throw new StepError("the supervisor was started without its document; only the start script starts it.");
  let inputs: Omit<SupervisorInputs, "config">;
  try {
    inputs = readInputs(Fields.of(document, "supervisor document"));
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    throw new StepError(
      `the supervisor's document is not valid: ${error.message}. It comes from the start of another module version; start the workspace again.`,
    );
  }
  const config = parseStartConfig((document as { settings?: unknown }).settings, homeDir());
  return { config: forRestart(config), ...inputs };
}

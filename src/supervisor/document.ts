import type { DecidedGate } from "../agentapi/version-gate.js";
import type { InstalledTools } from "../launch/launch.js";
import { StepError } from "../lib/log.js";
import { type StartConfig, takeScriptInputs } from "../settings/config.js";

const DOCUMENT_KIND = "goose-module-supervisor";

/** What a start hands the supervisor it leaves running: never the task prompt. */
export interface SupervisorDocument {
  kind: typeof DOCUMENT_KIND;
  config: StartConfig;
  tools: InstalledTools;
  gate: DecidedGate;
  /** When that start began. */
  since: number;
  /** The stop count when that start began (lifecycle/stop-request.ts): a stop since then ends the watch. */
  stops: number;
}

/**
 * A restart resumes the session that was running, so it needs no prompt and
 * can never deliver it again, and no install script; it resumes even with
 * `continue = false`, which asks for a new session per workspace start, not
 * per crash.
 */
export function supervisorDocument(
  config: StartConfig,
  tools: InstalledTools,
  gate: DecidedGate,
  start: { since: number; stops: number },
): SupervisorDocument {
  const goose = { ...config.goose, prompt: "", continue: true, installScript: { pre: "", post: "" } };
  return { kind: DOCUMENT_KIND, config: { ...config, goose }, tools, gate, ...start };
}

export function readSupervisorDocument(): SupervisorDocument {
  const document = takeScriptInputs().settings as Partial<SupervisorDocument> | null;
  if (document?.kind !== DOCUMENT_KIND)
    throw new StepError("the supervisor was started without its document; only the start script starts it.");
  return document as SupervisorDocument;
}

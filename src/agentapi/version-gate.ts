import clean from "semver/functions/clean.js";
import gte from "semver/functions/gte.js";

export const MIN_PERSISTENCE_VERSION = "0.12.0";

/**
 * The version in a `--version` line: its last field, cleaned to semver.
 * AgentAPI prints "agentapi version 0.12.2", Goose " 1.47.0".
 */
export function parseVersionOutput(output: string | null | undefined): string | null {
  if (!output) return null;
  const fields = output.trim().split(/\s+/);
  return clean(fields[fields.length - 1] ?? "");
}

export type DecidedGate = {
  kind: "decided";
  enabled: boolean;
  version: string | null;
  reason: string;
  warning?: string;
};
/** Asked no version that decides: the gate reads `server --help` next. */
type ProbeHelp = { kind: "probe-help"; version: null; reason: string };
export type PersistenceGate = DecidedGate | ProbeHelp;

export function gateOnVersion(requested: boolean, versionOutput: string | null): PersistenceGate {
  if (!requested) {
    return {
      kind: "decided",
      enabled: false,
      version: parseVersionOutput(versionOutput),
      reason: "enable_state_persistence is false",
    };
  }
  const version = parseVersionOutput(versionOutput);
  if (version === null) {
    const shown = versionOutput?.trim() ? `"${versionOutput.trim()}"` : "nothing";
    return {
      kind: "probe-help",
      version: null,
      reason: `agentapi --version printed ${shown}, which is not a semantic version`,
    };
  }
  if (gte(version, MIN_PERSISTENCE_VERSION)) {
    return { kind: "decided", enabled: true, version, reason: `agentapi ${version} >= ${MIN_PERSISTENCE_VERSION}` };
  }
  return {
    kind: "decided",
    enabled: false,
    version,
    reason: `agentapi ${version} < ${MIN_PERSISTENCE_VERSION}`,
    warning:
      `AgentAPI ${version} cannot save the chat history (state persistence needs ${MIN_PERSISTENCE_VERSION} or newer), ` +
      `so the dashboard chat will start empty after a restart; Goose still resumes its own session. ` +
      `Remove agentapi_version from the template to get the module's default, or set enable_state_persistence = false to silence this warning.`,
  };
}

/** For builds whose version string is not semver: trust what the binary says it accepts. */
export function gateOnHelp(
  previous: Extract<PersistenceGate, { kind: "probe-help" }>,
  helpOutput: string | null,
): DecidedGate {
  const supported = helpOutput !== null && /(^|\s)--state-file[\s=]/m.test(helpOutput);
  return supported
    ? {
        kind: "decided",
        enabled: true,
        version: null,
        reason: `${previous.reason}; agentapi server --help lists --state-file`,
      }
    : {
        kind: "decided",
        enabled: false,
        version: null,
        reason: `${previous.reason}; agentapi server --help does not list --state-file`,
        warning: `${previous.reason}, and its "server --help" does not offer --state-file, so the chat history will not survive a restart. Install AgentAPI ${MIN_PERSISTENCE_VERSION} or newer.`,
      };
}

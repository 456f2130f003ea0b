/** Where AgentAPI keeps the chat and its PID, given only when the version gate confirmed persistence. */
export interface PersistenceFiles {
  stateFile: string;
  pidFile: string;
}

/**
 * AgentAPI's command line: `agentapi server` for the agent command after
 * `--`. `prefix` is the Agent Firewall's command (empty without one): AgentAPI
 * starts it, and it starts the agent, so only the agent runs inside the
 * firewall.
 */
export function buildAgentapiArgs(opts: {
  port: number;
  persistence: PersistenceFiles | null;
  /** The agent's type, for AgentAPI's screen parsing (--type). */
  type: string;
  agent: string;
  agentArgs: string[];
  prefix?: string[];
}): string[] {
  const args = ["server", "--type", opts.type, "--port", String(opts.port)];
  if (opts.persistence) args.push("--state-file", opts.persistence.stateFile, "--pid-file", opts.persistence.pidFile);
  return [...args, "--", ...(opts.prefix ?? []), opts.agent, ...opts.agentArgs];
}

/**
 * AgentAPI's settings given in its environment (AgentAPI binds every flag to
 * AGENTAPI_<FLAG>: CreateServerCmd in cmd/server/server.go, coder/agentapi).
 * The state and PID files are not among them: they go as flags only
 * (buildAgentapiArgs), one way, and AgentAPI 0.12.2 honours either (checked
 * against the binary); with a state file, loading and saving default to on.
 * AgentAPI splits its allow-lists on spaces when they come from the
 * environment (cmd/server/server.go, coder/agentapi @ v0.12.2), and no entry
 * holds one (settings/access-lists.ts; variables.tf validates the additions).
 */
export function agentapiEnv(opts: {
  allowedHosts: string[];
  allowedOrigins: string[];
  chatBasePath: string;
}): Record<string, string> {
  const env: Record<string, string> = {
    AGENTAPI_ALLOWED_HOSTS: opts.allowedHosts.join(" "),
    AGENTAPI_ALLOWED_ORIGINS: opts.allowedOrigins.join(" "),
  };
  if (opts.chatBasePath) env.AGENTAPI_CHAT_BASE_PATH = opts.chatBasePath;
  return env;
}

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
 * AgentAPI's settings given in its environment. The AGENTAPI_* names are the
 * registry agentapi module's contract; the state ones are set only when the
 * binary passed the version gate, because older binaries silently ignore
 * them. AgentAPI splits its allow-lists on spaces when they come from the
 * environment (cmd/server/server.go, coder/agentapi @ v0.12.2), and no entry
 * holds one (settings/access-lists.ts; variables.tf validates the additions).
 */
export function agentapiEnv(opts: {
  allowedHosts: string[];
  allowedOrigins: string[];
  chatBasePath: string;
  persistence: PersistenceFiles | null;
}): Record<string, string> {
  const env: Record<string, string> = {
    AGENTAPI_ALLOWED_HOSTS: opts.allowedHosts.join(" "),
    AGENTAPI_ALLOWED_ORIGINS: opts.allowedOrigins.join(" "),
  };
  if (opts.chatBasePath) env.AGENTAPI_CHAT_BASE_PATH = opts.chatBasePath;
  if (opts.persistence) {
    env.AGENTAPI_STATE_FILE = opts.persistence.stateFile;
    env.AGENTAPI_PID_FILE = opts.persistence.pidFile;
    env.AGENTAPI_SAVE_STATE = "true";
    env.AGENTAPI_LOAD_STATE = "true";
  }
  return env;
}

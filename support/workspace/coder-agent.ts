// The Coder agent's part: it runs each coder_script as `/bin/sh -c <script>`
// in the workspace's HOME, with its own environment, and gives scripts the
// variables that name the deployment and the workspace.
import { type RunResult, run } from "./exec.js";

/** The environment every script gets: HOME, the user, and `pathDirs` as PATH. */
export function baseScriptEnv(home: string, pathDirs: string[]): Record<string, string> {
  const user = process.env.USER ?? "coder";
  return {
    HOME: home,
    USER: user,
    LOGNAME: process.env.LOGNAME ?? user,
    PATH: pathDirs.join(":"),
    LANG: "C.UTF-8",
  };
}

/**
 * A script's environment with the template's coder_agent `env` added, as the
 * agent gives it to every script and terminal it starts. 3.x's README put
 * GOOSE_TASK_PROMPT and GOOSE_SYSTEM_PROMPT there (a multi-line heredoc and
 * a coder_parameter's value), so values hold any text, newlines included.
 */
export function withTemplateAgentEnv(
  scriptEnv: Record<string, string>,
  agentEnv: Record<string, string>,
): Record<string, string> {
  for (const name of Object.keys(agentEnv))
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`coder_agent.env name ${JSON.stringify(name)}`);
  return { ...scriptEnv, ...agentEnv };
}

/**
 * What the agent adds for its scripts: where the deployment is, its token, and
 * names. With a wildcard app host ("*.apps.example.com"), also VSCODE_PROXY_URI
 * as coderd builds it (vscodeProxyURI in coderd/agentapi/manifest.go, with
 * SubdomainAppHost in coderd/workspaceapps/appurl/appurl.go for the port) and
 * the agent passes it on (updateCommandEnv in agent/agent.go).
 */
export function coderAgentEnv(opts: {
  url: string;
  token: string;
  workspaceName: string;
  owner: string;
  agentName: string;
  appHost?: string;
}): Record<string, string> {
  const env: Record<string, string> = {
    CODER: "true",
    CODER_AGENT_URL: opts.url,
    CODER_AGENT_TOKEN: opts.token,
    CODER_WORKSPACE_NAME: opts.workspaceName,
    CODER_WORKSPACE_OWNER_NAME: opts.owner,
    CODER_WORKSPACE_AGENT_NAME: opts.agentName,
  };
  if (opts.appHost) {
    const access = new URL(opts.url);
    const appHost = access.port && !/:\d+$/.test(opts.appHost) ? `${opts.appHost}:${access.port}` : opts.appHost;
    const app = `{{port}}--${opts.agentName}--${opts.workspaceName}--${opts.owner}`;
    env.VSCODE_PROXY_URI = `${access.protocol}//${appHost.replace("*", app)}`;
  }
  return env;
}

export function runCoderScript(
  script: string,
  opts: {
    home: string;
    env: NodeJS.ProcessEnv;
    timeoutMs?: number;
    user?: { uid: number; gid: number };
    /** What follows the script: `sh -c <script> <$0> <$1> ...`. */
    args?: string[];
  },
): Promise<RunResult> {
  return run("/bin/sh", ["-c", script, ...(opts.args ?? [])], {
    cwd: opts.home,
    env: opts.env,
    timeoutMs: opts.timeoutMs ?? 120_000,
    user: opts.user,
  });
}

/**
 * `/bin/sh` arguments that run the scripts of a workspace start as the Coder
 * agent does: the install and the start coder_scripts at once, each its own
 * `sh -c`, both children of one process (the agent; here a `sh` that stands
 * for this boot's agent), which ends when both have, with the start's exit
 * code.
 */
export function agentStartArgs(rendered: { install: string; start: string }): string[] {
  const agent = 'sh -c "$1" & sh -c "$2"; code=$?; wait; exit "$code"';
  return ["-c", agent, "sh", rendered.install, rendered.start];
}

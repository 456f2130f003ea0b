import { open, writeFile } from "node:fs/promises";
import { spawn, type ChildProcess } from "node:child_process";
import { agentapiUrl, getJson, pollUntil } from "./http.js";

/**
 * Starts AgentAPI in its own session so it outlives this script and the Coder
 * agent's process group. stdin is /dev/null: AgentAPI reads a non-terminal
 * stdin to EOF before it starts, and output must not hold the agent's pipes.
 */
export async function spawnAgentapi(opts: { binary: string; args: string[]; env: Record<string, string>; cwd: string; logFile: string }): Promise<ChildProcess> {
  const out = await open(opts.logFile, "a");
  await out.write(`\n--- ${new Date().toISOString()} ${opts.binary} ${opts.args.map((a) => JSON.stringify(a)).join(" ")}\n`);
  try {
    const child = spawn(opts.binary, opts.args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", out.fd, out.fd] });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    return child;
  } finally {
    await out.close();
  }
}

export async function writePidFile(file: string, pid: number): Promise<void> {
  await writeFile(file, `${pid}\n`, { mode: 0o600 });
}

export interface AgentStatus {
  status: string;
  agent_type?: string;
}

/** Polls AgentAPI's /status until `accept` takes the answer, failing early if the process exits. */
function pollStatus(port: number, accept: (status: AgentStatus) => boolean, opts: { timeoutMs: number; exited: () => string | undefined }) {
  return pollUntil<AgentStatus>(
    async () => {
      const reply = await getJson<AgentStatus>(agentapiUrl(port, "/status"), 2000);
      return reply.ok && typeof reply.body.status === "string" && accept(reply.body) ? reply.body : undefined;
    },
    { timeoutMs: opts.timeoutMs, intervalMs: 100, abort: opts.exited },
  );
}

/** Waits for AgentAPI's /status to answer at all. */
export function waitForReady(port: number, opts: { timeoutMs: number; exited: () => string | undefined }) {
  return pollStatus(port, () => true, opts);
}

/**
 * After AgentAPI answers, watches it for a while: a Goose that cannot start
 * (a bad provider, a session it cannot resume) exits within moments and takes
 * AgentAPI with it. Returns early once the agent is idle at its prompt.
 */
export function settle(port: number, opts: { timeoutMs: number; exited: () => string | undefined }) {
  return pollStatus(port, (s) => s.status === "stable", opts);
}

import { getJson } from "../lib/http.js";
import { pollUntil } from "../lib/poll.js";
import { agentapiUrl } from "./server.js";

export interface AgentStatus {
  status: string;
  agent_type?: string;
}

/** AgentAPI's /status answer, or null when it does not answer. */
export async function getStatus(port: number, timeoutMs = 1000): Promise<AgentStatus | null> {
  const reply = await getJson<AgentStatus>(agentapiUrl(port, "/status"), timeoutMs);
  return reply.ok && typeof reply.body.status === "string" ? reply.body : null;
}

/** Polls /status until `accept` takes the answer, the bound passes, or `exited` says the process is gone. */
export function pollStatus(
  port: number,
  accept: (status: AgentStatus) => boolean,
  opts: { timeoutMs: number; intervalMs?: number; exited?: () => string | undefined },
) {
  return pollUntil<AgentStatus>(
    async () => {
      const now = await getStatus(port);
      return now && accept(now) ? now : undefined;
    },
    { timeoutMs: opts.timeoutMs, intervalMs: opts.intervalMs ?? 50, abort: opts.exited },
  );
}

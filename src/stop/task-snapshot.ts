import { agentapiUrl } from "../agentapi/server.js";
import { buildSnapshot, type ChatMessage, SNAPSHOT_LIMITS } from "../agentapi/snapshot.js";
import { withoutStatus } from "../goose/screen.js";
import { getJson, type HttpReply, request } from "../lib/http.js";
import { log } from "../lib/log.js";
import type { StopConfig } from "../settings/config.js";

/** POSTs the chat's last messages to Coder's task log snapshot endpoint, both requests within one bound; says what happened. */
async function postSnapshot(taskId: string, port: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  const base = process.env.CODER_AGENT_URL;
  const token = process.env.CODER_AGENT_TOKEN;
  if (!base || !token) return "skipped: CODER_AGENT_URL or CODER_AGENT_TOKEN is not set";
  const chat = await getJson<{ messages?: ChatMessage[] }>(agentapiUrl(port, "/messages"), timeoutMs);
  if (!chat.ok) return `skipped: AgentAPI /messages failed (${chat.error})`;
  const snapshot = buildSnapshot(chat.body.messages ?? [], { ...SNAPSHOT_LIMITS, agentText: withoutStatus });
  const url = `${base.replace(/\/+$/, "")}/api/v2/workspaceagents/me/tasks/${encodeURIComponent(taskId)}/log-snapshot?format=agentapi`;
  let reply: HttpReply;
  try {
    reply = await request(url, {
      method: "POST",
      headers: { "Coder-Session-Token": token, "Content-Type": "application/json" },
      body: snapshot.payload,
      timeoutMs: Math.max(1, deadline - Date.now()),
    });
  } catch (error) {
    return `posting the snapshot failed: ${(error as Error).message}`;
  }
  const summary = `${snapshot.kept} message(s), ${Buffer.byteLength(snapshot.payload)} bytes${snapshot.truncated ? ", last message truncated" : ""}`;
  if (reply.status === 204) return `posted ${summary}`;
  if (reply.status === 404)
    return "Coder answered 404: this deployment has no task log snapshot endpoint (a release from before it, or v2.37 and later, which removed Tasks); skipped";
  if (reply.status >= 300 && reply.status <= 399)
    return `posting the snapshot failed: Coder answered HTTP ${reply.status}, a redirect to ${redirectTarget(url, reply.headers.location)}, which is not followed: the agent token goes only to CODER_AGENT_URL (${base}). Check that CODER_AGENT_URL is the deployment's own address`;
  return `Coder answered HTTP ${reply.status} to the snapshot (${summary}): ${reply.body.slice(0, 300)}`;
}

/** Where a redirect points, resolved against the request's URL, for the log. */
function redirectTarget(from: string, location: string | undefined): string {
  if (location === undefined) return "(no Location header)";
  try {
    return new URL(location, from).href.slice(0, 300);
  } catch {
    return JSON.stringify(location.slice(0, 300));
  }
}

/** Leaves the chat readable in Coder while a task is paused, when this workspace is a task that asks for it and AgentAPI still runs. */
export async function sendTaskSnapshot(
  task: StopConfig["task"],
  running: boolean,
  port: number,
  timeoutMs: number,
): Promise<void> {
  if (!task.enabled) return log("snapshot skipped: this workspace is not a Coder task");
  if (!task.logSnapshot) return log("snapshot skipped: task_log_snapshot is false");
  if (!running) return log("snapshot skipped: AgentAPI is not running");
  log(`snapshot: ${await postSnapshot(task.id, port, timeoutMs)}`);
}

import type { StopConfig } from "./config.js";
import { agentapiUrl, getJson } from "./http.js";
import { log } from "./log.js";
import { buildSnapshot, type ChatMessage } from "./snapshot.js";

/** POSTs the chat's last messages to Coder's task log snapshot endpoint; says what happened. */
async function postSnapshot(taskId: string, port: number, timeoutMs: number): Promise<string> {
  const base = process.env.CODER_AGENT_URL;
  const token = process.env.CODER_AGENT_TOKEN;
  if (!base || !token) return "skipped: CODER_AGENT_URL or CODER_AGENT_TOKEN is not set";
  const reply = await getJson<{ messages?: ChatMessage[] }>(agentapiUrl(port, "/messages"), timeoutMs);
  if (!reply.ok) return `skipped: AgentAPI /messages failed (${reply.error})`;
  const snapshot = buildSnapshot(reply.body.messages ?? []);
  const url = `${base.replace(/\/+$/, "")}/api/v2/workspaceagents/me/tasks/${encodeURIComponent(taskId)}/log-snapshot?format=agentapi`;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Coder-Session-Token": token, "Content-Type": "application/json" },
      body: snapshot.payload,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const summary = `${snapshot.kept} message(s), ${Buffer.byteLength(snapshot.payload)} bytes${snapshot.truncated ? ", last message truncated" : ""}`;
    if (response.status === 204) return `posted ${summary}`;
    if (response.status === 404)
      return "Coder answered 404: this deployment does not accept task log snapshots (an older Coder); skipped";
    const text = (await response.text().catch(() => "")).slice(0, 300);
    return `Coder answered HTTP ${response.status} to the snapshot (${summary}): ${text}`;
  } catch (error) {
    return `posting the snapshot failed: ${(error as Error).message}`;
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
  if (!task.log_snapshot) return log("snapshot skipped: task_log_snapshot is false");
  if (!running) return log("snapshot skipped: AgentAPI is not running");
  log(`snapshot: ${await postSnapshot(task.id, port, timeoutMs)}`);
}

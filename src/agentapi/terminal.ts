import { firstEventData, postJson } from "../lib/http.js";
import { agentapiUrl } from "./server.js";

/**
 * What a look at the agent's screen gave: its text; "absent" when AgentAPI has
 * no screen stream (it refused the request); null when no screen came within
 * the bound, which says nothing about the agent: on a loaded machine, or with
 * a step's last milliseconds as the bound, a screen that is there can come late.
 */
export type ScreenRead = string | "absent" | null;

/**
 * The terminal screen AgentAPI sees, from the stream its own web terminal
 * reads (GET /internal/screen, hidden from its API docs: Routes in
 * lib/httpapi/server.go, coder/agentapi @ v0.12.2; it sends the current
 * screen first, subscribeScreen there); /messages leaves out the input area
 * at the bottom of the screen.
 */
export async function readScreen(port: number, timeoutMs: number): Promise<ScreenRead> {
  const got = await firstEventData(agentapiUrl(port, "/internal/screen"), timeoutMs);
  if (got === null) return null;
  if ("status" in got) return "absent";
  try {
    const parsed = JSON.parse(got.data) as { screen?: unknown };
    return typeof parsed.screen === "string" ? parsed.screen : null;
  } catch {
    return null;
  }
}

/** Types `content` into the agent's terminal as keystrokes (POST /message, type "raw"). */
export function typeRaw(port: number, content: string, timeoutMs: number) {
  return postJson(agentapiUrl(port, "/message"), { type: "raw", content }, timeoutMs);
}

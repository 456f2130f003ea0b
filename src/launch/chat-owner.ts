import { readFile } from "node:fs/promises";
import type { ChatOwner } from "./session-decision.js";

/**
 * Which Goose session AgentAPI's saved chat belongs to, as the start recorded
 * it beside the state file; null when there is no record or it is unreadable
 * (the decision then treats the chat's owner as unknown).
 */
export async function readChatOwner(file: string): Promise<ChatOwner | null> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<ChatOwner>;
    if (typeof parsed.session_name !== "string") return null;
    return {
      session_name: parsed.session_name,
      session_id: typeof parsed.session_id === "string" ? parsed.session_id : null,
    };
  } catch {
    return null;
  }
}

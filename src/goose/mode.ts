import type { GooseMode } from "../settings/config.js";

/**
 * Whether the stop may type `/exit` + Enter into Goose's terminal. In the
 * approve modes Goose may be waiting on its tool-approval menu, which AgentAPI
 * reports as "stable" like an idle prompt; Enter there picks the highlighted
 * choice, Allow (prompt_tool_confirmation, crates/goose-cli/src/session/mod.rs
 * @ v1.46.1), so typing would run the tool call the mode exists to hold back.
 */
export function mayTypeExit(mode: GooseMode): boolean {
  return mode === "auto" || mode === "chat";
}

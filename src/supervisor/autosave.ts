/**
 * When the supervisor asks AgentAPI to save the chat: as soon as a turn has
 * ended. AgentAPI says "running" while the screen changes and "stable" once it
 * has not changed for 2 s (GET /status, coder/agentapi lib/screentracker @
 * v0.12.2), so a turn shows as running, then stable. The first stable reading
 * saves: a save costs a few milliseconds, and one during a quiet stretch inside
 * a turn (a tool that prints nothing for 2 s) is harmless, whereas waiting
 * longer loses the turn to a crash meanwhile.
 */
export interface AutosaveState {
  /** Something ran since the last save (a launch counts: Goose may answer the task prompt before the first stable). */
  pending: boolean;
}

export const AUTOSAVE_START: AutosaveState = { pending: true };

/**
 * One /status reading: save at the first stable after running. No answer
 * (null: AgentAPI busy with a message, or gone) changes nothing.
 */
export function autosaveStep(state: AutosaveState, status: string | null): { state: AutosaveState; save: boolean } {
  if (status === "running") return { state: { pending: true }, save: false };
  if (status !== "stable") return { state, save: false };
  return { state: { pending: false }, save: state.pending };
}

export type ChatVersusSaved = "not-loaded" | "saved" | "new";

/**
 * The chat AgentAPI shows against the one in its state file (message texts,
 * in order). AgentAPI loads the saved chat only once Goose is ready, and a
 * save before that writes an almost empty chat over it (SaveState does not
 * wait for the load; coder/agentapi lib/screentracker/pty_conversation.go @
 * v0.12.2); loaded, it shows at least the saved messages. A chat equal to the
 * saved one needs no save.
 */
export function compareWithSaved(saved: string[] | null, shown: string[]): ChatVersusSaved {
  if (saved === null) return "new";
  if (shown.length < saved.length) return "not-loaded";
  return shown.length === saved.length && shown.every((text, i) => text === saved[i]) ? "saved" : "new";
}

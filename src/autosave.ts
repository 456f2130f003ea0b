/**
 * When the supervisor asks AgentAPI to save the chat: once a turn has ended.
 * AgentAPI says "running" while the screen changes and "stable" once it has
 * not changed for 2 s (GET /status, coder/agentapi lib/screentracker @
 * v0.12.2), so a turn shows as running, then stable.
 */
export interface AutosaveState {
  /** Something ran since the last save (a launch counts: Goose may answer the task prompt before the first stable). */
  pending: boolean;
  /** When the current stable stretch began; null while running. */
  stableSince: number | null;
}

export const AUTOSAVE_START: AutosaveState = { pending: true, stableSince: null };

// A stable screen that lasts this long is the end of the turn rather than a
// pause inside it (a tool that prints nothing for 2 s).
export const AUTOSAVE_DEBOUNCE_MS = 1000;

/**
 * One /status reading: save once the agent has been stable for the debounce
 * after running. No answer (null: AgentAPI busy with a message, or gone)
 * changes nothing.
 */
export function autosaveStep(
  state: AutosaveState,
  status: string | null,
  now: number,
  debounceMs = AUTOSAVE_DEBOUNCE_MS,
): { state: AutosaveState; save: boolean } {
  if (status === "running") return { state: { pending: true, stableSince: null }, save: false };
  if (status !== "stable") return { state, save: false };
  const stableSince = state.stableSince ?? now;
  const save = state.pending && now - stableSince >= debounceMs;
  return { state: { pending: state.pending && !save, stableSince }, save };
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

import { setTimeout as delay } from "node:timers/promises";
import { agentapiUrl } from "../agentapi/server.js";
import { saveState } from "../agentapi/state-save.js";
import { getStatus } from "../agentapi/status.js";
import { getJson } from "../lib/http.js";
import { log, warn } from "../lib/log.js";
import { isRunning } from "../lib/processes.js";
import { savedMessageTexts } from "../lifecycle/chat-file.js";
import { AUTOSAVE_START, autosaveStep, type ChatVersusSaved, compareWithSaved } from "./autosave.js";

const SAVE_TIMEOUT_MS = 2000;

/** What AgentAPI shows against what its state file holds; null when /messages does not answer. */
async function chatVersusSaved(port: number, stateFile: string): Promise<ChatVersusSaved | null> {
  const shown = await getJson<{ messages?: Array<{ content?: unknown }> }>(agentapiUrl(port, "/messages"), 2000);
  if (!shown.ok) return null;
  return compareWithSaved(
    await savedMessageTexts(stateFile),
    (shown.body.messages ?? []).map((m) => String(m?.content ?? "")),
  );
}

/** Saves the chat after a turn has ended, and says how long AgentAPI took to confirm it. */
async function autosave(pid: number, stateFile: string, agentLog: string): Promise<void> {
  const started = Date.now();
  const outcome = await saveState(pid, stateFile, agentLog, SAVE_TIMEOUT_MS);
  (outcome.confirmed ? log : warn)(`autosave after a turn: ${outcome.note} (${Date.now() - started} ms)`);
}

// A helper lives only until the turn's end shows, so it can read often: one
// local GET /status each time.
const READ_MS = 50;

/**
 * Saves the chat at AgentAPI's first "stable" reading, once it shows the
 * saved chat loaded and something new, or gives up after `boundMs`.
 */
export async function saveAfterTurn(watch: {
  pid: number;
  port: number;
  stateFile: string;
  agentLog: string;
  boundMs: number;
}): Promise<void> {
  const until = Date.now() + watch.boundMs;
  while (Date.now() < until) {
    // A helper starts because something ran: every reading is the first since.
    const status = (await getStatus(watch.port))?.status ?? null;
    // No answer because AgentAPI has gone: the supervisor sees the exit itself and decides what follows.
    if (status === null && !(await isRunning(watch.pid)))
      return log(`autosave: AgentAPI (PID ${watch.pid}) exited before the turn's end showed; nothing to save`);
    const { save } = autosaveStep(AUTOSAVE_START, status);
    const chat = save ? await chatVersusSaved(watch.port, watch.stateFile) : null;
    // Not loaded yet, or no answer: the save waits for a later reading.
    if (chat === null || chat === "not-loaded") {
      await delay(READ_MS);
      continue;
    }
    if (chat === "new") await autosave(watch.pid, watch.stateFile, watch.agentLog);
    return;
  }
}

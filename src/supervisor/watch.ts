import { access, readFile } from "node:fs/promises";
import { saveState } from "../agentapi/state-save.js";
import { getStatus } from "../agentapi/status.js";
import { agentapiUrl, getJson } from "../lib/http.js";
import { log, warn } from "../lib/log.js";
import { findRunningAgentapi, isAgentapiServer, readCmdline } from "../lib/processes.js";
import { readStopTarget } from "../lifecycle/launch-record.js";
import type { ModulePaths } from "../settings/config.js";
import { AUTOSAVE_START, autosaveStep, type ChatVersusSaved, compareWithSaved } from "./autosave.js";

// Fast enough to notice an exit within a quarter second, and to save a turn
// well within half a second of AgentAPI saying "stable" (the autosave itself
// takes a few milliseconds); cheap: one /proc read and one local GET /status.
const WATCH_MS = 250;
const SAVE_TIMEOUT_MS = 2000;

export async function exists(dir: string): Promise<boolean> {
  return access(dir).then(
    () => true,
    () => false,
  );
}

/** What AgentAPI shows against what its state file holds; null when /messages does not answer. */
async function chatVersusSaved(port: number, stateFile: string): Promise<ChatVersusSaved | null> {
  const shown = await getJson<{ messages?: Array<{ content?: unknown }> }>(agentapiUrl(port, "/messages"), 2000);
  if (!shown.ok) return null;
  let saved: string[] | null = null;
  try {
    const state = JSON.parse(await readFile(stateFile, "utf8")) as { messages?: Array<{ message?: unknown }> };
    if (Array.isArray(state.messages)) saved = state.messages.map((m) => String(m?.message ?? ""));
  } catch {}
  return compareWithSaved(
    saved,
    (shown.body.messages ?? []).map((m) => String(m?.content ?? "")),
  );
}

/** Saves the chat after a turn has ended, and says how long AgentAPI took to confirm it. */
async function autosave(pid: number, stateFile: string, agentLog: string): Promise<void> {
  const started = Date.now();
  const outcome = await saveState(pid, stateFile, agentLog, SAVE_TIMEOUT_MS);
  (outcome.confirmed ? log : warn)(`autosave after a turn: ${outcome.note} (${Date.now() - started} ms)`);
}

/** What the watch needs from the supervisor. */
export interface Watch {
  paths: ModulePaths;
  port: number;
  agentLog: string;
  /** Waits; says why the watch must end when the supervisor has to stand down meanwhile. */
  sleep: (ms: number) => Promise<string | undefined>;
}

/**
 * Watches the AgentAPI the PID file names until it is gone, saving the chat
 * after every turn when the launch record says persistence is on; returns
 * what ended the watch.
 */
export async function watchAgentapi(w: Watch): Promise<string> {
  const { paths, port } = w;
  const found = await findRunningAgentapi(paths.pidFile, port);
  if (found.status !== "running") return `no AgentAPI runs on port ${port} (PID file: ${found.status})`;
  const { pid } = found;
  const since = Date.now();
  const { target } = await readStopTarget(paths.launchRecord, {
    port,
    pidFile: paths.pidFile,
    stateFile: paths.stateFile,
  });
  log(
    `watching AgentAPI (PID ${pid})${target.persistence ? "; the chat is saved after every turn" : `; no autosave (${target.persistenceReason})`}`,
  );
  let turns = AUTOSAVE_START;
  for (;;) {
    const standDown = await w.sleep(WATCH_MS);
    if (standDown) return standDown;
    if (!(await exists(paths.dir))) return `${paths.dir} is gone`;
    const argv = await readCmdline(pid);
    if (argv === null || !isAgentapiServer(argv, port))
      return `AgentAPI (PID ${pid}) exited after ${Math.round((Date.now() - since) / 1000)} s without a stop`;
    if (!target.persistence) continue;
    const step = autosaveStep(turns, (await getStatus(port))?.status ?? null);
    const chat = step.save ? await chatVersusSaved(port, paths.stateFile) : null;
    // Not loaded yet, or no answer: the save waits for a later reading.
    if (step.save && (chat === null || chat === "not-loaded")) continue;
    turns = step.state;
    if (chat === "new") await autosave(pid, paths.stateFile, w.agentLog);
  }
}

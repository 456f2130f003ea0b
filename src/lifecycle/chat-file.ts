import { readFileSync, rmSync } from "node:fs";
import { judgeStateAfterStop } from "../agentapi/state-check.js";
import { type StateSummary, summarizeState } from "../agentapi/state-file.js";
import { withoutStatus } from "../goose/screen.js";
import { copyFileAtomic, writeFileAtomic } from "../lib/atomic-write.js";
import { diskFullNote } from "../lib/disk-space.js";
import { readOptional } from "../lib/files.js";
import { log, warn } from "../lib/log.js";
import { setAside, setAsideName } from "../lib/set-aside.js";

// AgentAPI's state file, the chat the dashboard shows, and the files the
// module keeps beside it. AgentAPI writes the state file itself (asked with
// SIGUSR1, agentapi/state-save.ts, and when it exits); everything the module
// reads from it or does to it is here, for the start, the supervisor and the
// stop alike. The Go-exact check of what AgentAPI would load is
// agentapi/state-file.ts, the verdict after a stop agentapi/state-check.ts.

/** Every file named after the state file, made here and nowhere else. */
export function chatFiles(stateFile: string) {
  return {
    state: stateFile,
    /** The copy a start takes of a chat it keeps, put back if AgentAPI overwrites the chat before it has loaded it. */
    backup: `${stateFile}.bak`,
    /** Which Goose session the chat belongs to (ChatOwner). */
    owner: `${stateFile}.owner.json`,
    /** AgentAPI's own file while it saves, renamed over the state file (SaveState in lib/screentracker/pty_conversation.go, coder/agentapi @ v0.12.2). */
    tmp: `${stateFile}.tmp`,
    /** Where a chat set aside at `now` goes. */
    setAside: (now: Date) => setAsideName(stateFile, now),
  };
}

/** Which Goose session a saved chat belongs to, recorded beside the state file at every start. */
export interface ChatOwner {
  session_name: string;
  session_id: string | null;
}

/** What a start does with the saved chat: nothing, keep it (with a backup), or move it aside. */
export type ChatAction = "none" | "keep" | "set-aside";

/** The saved chat as a launch finds it, read once for the decision and the preparation. */
export interface SavedChat {
  /** The state file's text; null when there is none. */
  text: string | null;
  summary: StateSummary;
  owner: ChatOwner | null;
}

/**
 * The chat's JSON as JSON.parse reads it, for the module's own reading and
 * rewriting; whether AgentAPI would load it is summarizeState's question.
 * Null when it is not an object with a messages array.
 */
function parseChat(text: string): { state: Record<string, unknown>; messages: unknown[] } | null {
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch {
    return null;
  }
  if (!state || typeof state !== "object") return null;
  const { messages } = state as { messages?: unknown };
  return Array.isArray(messages) ? { state: state as Record<string, unknown>, messages } : null;
}

/**
 * Which Goose session the chat belongs to, as the start recorded it; null
 * when there is no record or it is unreadable (the decision then treats the
 * chat's owner as unknown).
 */
async function readOwner(file: string): Promise<ChatOwner | null> {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<ChatOwner>;
    if (typeof parsed.session_name !== "string") return null;
    return {
      session_name: parsed.session_name,
      session_id: typeof parsed.session_id === "string" ? parsed.session_id : null,
    };
  } catch {
    return null;
  }
}

/** The saved chat and its owner, for a launch's decision. */
export async function readSavedChat(stateFile: string): Promise<SavedChat> {
  const files = chatFiles(stateFile);
  const [text, owner] = await Promise.all([readOptional(files.state), readOwner(files.owner)]);
  return { text, summary: summarizeState(text), owner };
}

/** The texts of the saved messages, in order; null when there is no readable chat. */
export async function savedMessageTexts(stateFile: string): Promise<string[] | null> {
  const chat = parseChat((await readOptional(stateFile).catch(() => null)) ?? "");
  return chat ? chat.messages.map((m) => String((m as { message?: unknown } | null)?.message ?? "")) : null;
}

interface SavedMessage {
  id?: unknown;
  message?: unknown;
  role?: unknown;
}

/**
 * Takes Goose's status lines out of a state file's agent messages
 * (goose/screen.ts withoutStatus), and the messages left with nothing else,
 * saying how many messages changed; null when there is nothing to take out,
 * so the caller writes nothing.
 * AgentAPI saves whatever the screen showed, so a stop during a turn saved a
 * message of only Goose's spinner, and a cancelled turn its spinner and the
 * echoed ^C, restored at every start. Ids are renumbered only when they were
 * the positions (as AgentAPI numbers them), so the next message AgentAPI adds
 * cannot collide with a kept one.
 */
export function removeStatusLines(text: string): { text: string; changed: number } | null {
  const chat = parseChat(text);
  if (!chat) return null;
  const messages = chat.messages as SavedMessage[];
  let changed = 0;
  const kept = messages.flatMap((m) => {
    const message = m?.role === "agent" && typeof m.message === "string" ? withoutStatus(m.message) : m?.message;
    if (message === m?.message) return [m];
    changed++;
    return message === null ? [] : [{ ...m, message }];
  });
  if (changed === 0) return null;
  const positional = messages.every((m, index) => m?.id === index);
  const renumbered = positional ? kept.map((m, index) => ({ ...m, id: index })) : kept;
  return { text: `${JSON.stringify({ ...chat.state, messages: renumbered })}\n`, changed };
}

/**
 * Rewrites the state file without Goose's status lines; writes nothing when
 * there are none. Returns the text the file now holds.
 */
async function cleanStatusLines(stateFile: string, text: string): Promise<string> {
  const cleaned = removeStatusLines(text);
  if (!cleaned) return text;
  const what = `Goose's status lines from ${cleaned.changed} agent message(s)`;
  try {
    await writeFileAtomic(stateFile, cleaned.text, { mode: 0o600 });
    log(`state: removed ${what}`);
    return cleaned.text;
  } catch (error) {
    warn(`state: could not remove ${what} from ${stateFile}: ${(error as Error).message}`);
    return text;
  }
}

// Set-aside chats are the user's, so none is deleted when it is set aside;
// beyond this many, the oldest go, at a workspace start only. A supervisor's
// restarts can repeat many times unattended, so they never delete one.
const SET_ASIDE_KEEP = 5;

/**
 * Readies the chat for a launch with persistence, as the start decided, and
 * records which Goose session it belongs to. Returns the backup the stop
 * restores if AgentAPI is stopped before it has loaded the chat and
 * overwrites it with a near-empty one; null when none was taken.
 */
export async function prepareChat(
  stateFile: string,
  opts: { action: ChatAction; why?: string; saved: SavedChat; owner: ChatOwner; restart: boolean },
): Promise<string | null> {
  const files = chatFiles(stateFile);
  const { saved } = opts;
  rmSync(files.tmp, { force: true });
  let backup: string | null = null;
  if (opts.action === "set-aside") {
    const kept = files.setAside(new Date());
    const removed = await setAside(files.state, kept, opts.restart ? Number.POSITIVE_INFINITY : SET_ASIDE_KEEP);
    rmSync(files.backup, { force: true });
    warn(
      `${opts.why ?? "stale AgentAPI state"}; moved ${files.state} to ${kept} so the dashboard does not show a history Goose cannot remember`,
    );
    if (removed.length > 0)
      log(`removed ${removed.length} set-aside chat(s) older than the newest ${SET_ASIDE_KEEP}: ${removed.join(", ")}`);
  } else if (opts.action === "keep" && saved.summary.kind === "valid" && saved.text !== null) {
    await writeFileAtomic(files.backup, await cleanStatusLines(files.state, saved.text), { mode: 0o600 });
    log(`AgentAPI state: ${saved.summary.messages} message(s) kept; backup at ${files.backup}`);
    backup = files.backup;
  } else {
    rmSync(files.backup, { force: true });
  }
  await writeFileAtomic(files.owner, `${JSON.stringify(opts.owner)}\n`, { mode: 0o600 });
  return backup;
}

/**
 * After AgentAPI is gone: puts back the copy taken at start if AgentAPI wrote
 * a near-empty chat over it, and takes Goose's status lines out of the chat.
 * Returns true when the chat of this run is lost.
 */
export async function verifyChatAfterStop(opts: {
  stateFile: string;
  backupFile: string | null;
  persistence: boolean;
  wasRunning: boolean;
}): Promise<boolean> {
  let text: string | null;
  try {
    text = await readOptional(opts.stateFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EISDIR") throw error;
    warn(
      `state: ${opts.stateFile} is a folder, so no chat can be saved there; move it away, or set state_file_path to a file path`,
    );
    return false;
  }
  const after = summarizeState(text);
  const backup: StateSummary = opts.backupFile
    ? summarizeState(await readOptional(opts.backupFile))
    : { kind: "missing" };
  const verdict = judgeStateAfterStop(after, backup, { persistence: opts.persistence, wasRunning: opts.wasRunning });
  const full = verdict.action === "restore" || verdict.lost ? await diskFullNote(opts.stateFile) : null;
  const because = full ? `; ${full}` : "";
  if (verdict.action === "restore" && opts.backupFile) {
    await copyFileAtomic(opts.backupFile, opts.stateFile);
    warn(`${verdict.reason}${because}; restored ${opts.stateFile} from ${opts.backupFile}`);
  } else if (verdict.lost) {
    warn(`state: ${verdict.reason}${because}`);
  } else {
    log(`state: ${verdict.reason}`);
  }
  if (opts.persistence && verdict.action === "keep" && text !== null) await cleanStatusLines(opts.stateFile, text);
  return verdict.lost;
}

import type { TurnDecision } from "../goose/interrupted-turn.js";
import type { SessionProbe, TailRead } from "../goose/session-records.js";
import { type FileIdentity, sameIdentity } from "../lib/files.js";
import type { GooseAnswer, LaunchRecord, RecordRead, StopFindings } from "../lifecycle/launch-record.js";

/** What a start finds before it would ask Goose, to hold against the launch record. */
export interface ShortcutNow {
  sessionName: string;
  continueSession: boolean;
  restart: boolean;
  folder: string;
  /** sessions.db for this start's environment. */
  db: string;
  binary: string;
  binaryIdentity: FileIdentity;
  /** The identity now of each file the last stop must have recorded: Goose's database files and the chat files. */
  files: Record<string, FileIdentity>;
}

export type Shortcut =
  | { take: true; probe: Extract<SessionProbe, { kind: "found" }>; tail: TailRead; reason: string }
  | { take: false; reason: string };

/** Why the recorded launch cannot stand in for Goose's answer, or null when it can. */
function whyNot(record: LaunchRecord, stopped: StopFindings | null, now: ShortcutNow): string | null {
  const { goose } = record;
  if (record.mode !== "warm" || goose.session_id === null)
    return "the last launch began a new session, whose id only Goose knows";
  if (record.session_name !== now.sessionName)
    return `the session name changed from "${record.session_name}" to "${now.sessionName}"`;
  if (goose.messages === null || goose.messages === 0) return "the session held no message at the last start";
  if (goose.conversation_end !== "answered" && goose.conversation_end !== "continued")
    return `the conversation's end was ${goose.conversation_end} at the last start`;
  if (stopped === null || stopped.launch !== record.started_at)
    return "no stop saw the last launch's Goose leave by itself at its prompt (it was signalled, a turn ran, or it ended some other way)";
  if (goose.folder !== now.folder) return `the folder changed from ${goose.folder} to ${now.folder}`;
  if (goose.db !== now.db) return `Goose's database is looked for at ${now.db}, not ${goose.db}`;
  if (goose.binary !== now.binary) return `the goose binary is ${now.binary}, not ${goose.binary}`;
  if (now.binaryIdentity.kind !== "file" || !sameIdentity(goose.binary_identity, now.binaryIdentity))
    return `${now.binary} changed since the last start`;
  for (const [file, identity] of Object.entries(now.files)) {
    const recorded = stopped.files[file];
    if (recorded === undefined) return `the last stop did not record ${file}`;
    if (identity.kind === "other") return `${file} is not a regular file (${identity.why})`;
    if (file === now.db && identity.kind !== "file") return `${file} is missing`;
    if (!sameIdentity(recorded, identity)) return `${file} changed since the last stop`;
  }
  return null;
}

/**
 * Whether a start may take Goose's answer from the launch record instead of
 * running `goose session export`. Only a stop that saw the last launch's
 * Goose idle at its prompt leave on the typed /exit records what it found
 * about that launch (lifecycle/launch-record.ts, StopFindings): Goose's database closed, the
 * chat verified. Unchanged since, by device, inode, size and times, Goose's
 * store holds what it held when Goose left, and that launch resumed its
 * session by id: a session Goose had given at the start before as holding
 * messages, whose last turn was answered or carried on, and which the stop
 * saw answered (Goose idle at its prompt). Anything else asks Goose: no
 * record, or one from another module version; no findings about the last
 * launch: a stop that signalled Goose or saw a turn; a new session; another session name, folder, database path or
 * goose binary; any file changed, missing or not a regular file; a
 * supervisor's restart (Goose ended without a stop); continue = false.
 *
 * What the identities prove is that nothing wrote to the store after Goose
 * left. What the run itself wrote is vouched for by the launch's own Goose
 * (its session, resumed by id) and by what the stop saw of it, not read
 * back: a `goose` the user ran by hand on the same store while the module's
 * Goose ran is not seen here, nor a turn whose model call failed while Goose
 * went back to its prompt. A start asking Goose would carry such a turn on
 * when Goose stored no reply for it (Goose 1.46, or an error Goose 1.47 does
 * not store); when Goose stored the error, it would send nothing either, and
 * only its log would differ: the turn began after a start that found the
 * session holding messages, so not with the first prompt
 * (decideInterruptedTurn).
 */
export function decideShortcut(recorded: RecordRead, stopped: StopFindings | null, now: ShortcutNow): Shortcut {
  if (now.restart) return { take: false, reason: "a restart after Goose ended without a stop" };
  if (!now.continueSession) return { take: false, reason: "continue is false" };
  if (recorded.first) return { take: false, reason: "the module never launched Goose here" };
  if ("problem" in recorded) return { take: false, reason: recorded.problem };
  const { record } = recorded;
  const reason = whyNot(record, stopped, now);
  if (reason !== null) return { take: false, reason };
  const { goose } = record;
  const id = goose.session_id as string;
  const messages = goose.messages as number;
  const source = `as Goose left it at the last stop, ${stopped?.at}; the count is Goose's at the start before`;
  return {
    take: true,
    reason: `the last stop saw Goose leave at its prompt (${stopped?.at}), and Goose's database and the chat are unchanged since`,
    probe: { kind: "found", id, messages, workingDir: goose.working_dir, source },
    // The stop saw Goose idle at its prompt, so its last turn was answered.
    tail: {
      kind: "read",
      tail: {
        visibleCount: messages,
        lastVisibleRole: null,
        lastVisibleUserText: null,
        lastVisibleId: null,
        unanswered: false,
        modelError: null,
      },
      source,
    },
  };
}

/** How the conversation ended at this start, as the launch record keeps it (GooseAnswer). */
export function conversationEnd(
  mode: "cold" | "warm",
  tail: TailRead,
  turn: TurnDecision,
): GooseAnswer["conversation_end"] {
  if (mode === "cold") return "unknown";
  if (turn.action === "continue") return "continued";
  // A turn left waiting (interrupted, or ended in a model error) is one Goose will not answer by itself.
  if (turn.action === "wait") return "unanswered";
  return tail.kind === "read" ? "answered" : "unknown";
}

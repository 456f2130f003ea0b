import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { type FileIdentity, fileIdentity, readOptional } from "../lib/files.js";
import { Fields } from "../lib/json-fields.js";
import { chatFiles } from "./chat-file.js";

/**
 * What the start script decided, so the stop script acts on the same answer
 * instead of guessing. The start writes it, the stop and the supervisor read
 * it: it is the one contract between them, so it depends on neither side.
 * Its keys are snake_case because it is a file the user may read.
 */
export interface LaunchRecord {
  persistence: boolean;
  persistence_reason: string;
  agentapi_binary: string;
  agentapi_version: string | null;
  port: number;
  state_file: string;
  state_backup: string | null;
  pid_file: string;
  session_name: string;
  mode: "cold" | "warm";
  /** What the start did about a turn the last run left unanswered. */
  interrupted_turn: { action: "none" | "continue" | "wait"; reason: string };
  started_at: string;
  /** What this launch took from Goose's session store, for the next start's shortcut (launch/warm-shortcut.ts). */
  goose: GooseAnswer;
  /** Set when the supervisor gave up restarting this launch's AgentAPI. */
  supervisor?: { gave_up_at: string; reason: string };
  /** Set by a stop that saw this launch's Goose leave by itself (StopFindings). */
  stopped?: StopFindings;
}

/** What a launch took from Goose's session store, and where that store and that Goose were. */
export interface GooseAnswer {
  /** sessions.db where Goose keeps it for the environment the start ran in (goose/sessions.ts). */
  db: string;
  binary: string;
  /** The binary's identity as the start found it (the file a link leads to). */
  binary_identity: FileIdentity;
  folder: string;
  /** The session resumed by its id; null on a cold start, where Goose picks the new session's id. */
  session_id: string | null;
  /** Goose's count of user-visible messages in it at the start; null when no session was found. */
  messages: number | null;
  working_dir: string | null;
  /**
   * How the conversation ended at the start: answered, carried on by this
   * launch (the interrupted turn), or left with a message Goose will not
   * answer by itself, or not read.
   */
  conversation_end: "answered" | "continued" | "unanswered" | "unknown";
}

/**
 * What a stop saw once this launch's Goose had left by itself: idle at its
 * prompt with no turn run during the stop, it left on the typed /exit and
 * AgentAPI with it, so Goose's database was closed. `files`: the identity of
 * Goose's database files and of the chat files right after, by path. Written
 * only then; a stop that signalled Goose, or saw a turn, writes none.
 */
export interface StopFindings {
  at: string;
  files: Record<string, FileIdentity>;
}

const CONVERSATION_ENDS = ["answered", "continued", "unanswered", "unknown"] as const;
const DECIMAL = /^[0-9]+$/;

function parseIdentity(fields: Fields): FileIdentity {
  const kind = fields.oneOf("kind", ["file", "missing", "other"] as const);
  if (kind === "missing") return { kind };
  if (kind === "other") return { kind, why: fields.string("why") };
  const digits = (key: string) => {
    const value = fields.string(key);
    if (!DECIMAL.test(value)) throw new Error(`${key} must be a whole number written in decimal`);
    return value;
  };
  return {
    kind,
    ...{ dev: digits("dev"), ino: digits("ino"), size: digits("size") },
    ...{ mtime_ns: digits("mtime_ns"), ctime_ns: digits("ctime_ns") },
  };
}

/** The part of the launch record the next start's shortcut reads. */
export interface RecordedLaunch {
  sessionName: string;
  mode: "cold" | "warm";
  goose: GooseAnswer;
  stopped: StopFindings | null;
}

function parseRecordedLaunch(text: string): RecordedLaunch {
  const record = Fields.of(JSON.parse(text), "launch record");
  const goose = record.object("goose");
  const answer: GooseAnswer = {
    db: goose.path("db"),
    binary: goose.path("binary"),
    binary_identity: parseIdentity(goose.object("binary_identity")),
    folder: goose.path("folder"),
    session_id: goose.nullableString("session_id"),
    messages: goose.nullableInteger("messages", 0, Number.MAX_SAFE_INTEGER),
    working_dir: goose.nullableString("working_dir"),
    conversation_end: goose.oneOf("conversation_end", CONVERSATION_ENDS),
  };
  let stopped: StopFindings | null = null;
  if (record.has("stopped")) {
    const found = record.object("stopped");
    const files: Record<string, FileIdentity> = Object.create(null);
    for (const [file, entry] of Object.entries(found.objectMap("files")))
      files[file] = parseIdentity(Fields.of(entry, `launch record.stopped.files.${file}`));
    stopped = { at: found.string("at"), files };
  }
  return {
    sessionName: record.string("session_name"),
    mode: record.oneOf("mode", ["cold", "warm"] as const),
    goose: answer,
    stopped,
  };
}

/**
 * The launch record as the next start reads it for its shortcut: `first`
 * when there certainly is none (the module never launched Goose here), else
 * the record or why it cannot be used.
 */
export async function readRecordedLaunch(
  file: string,
): Promise<{ first: true } | { first: false; record: RecordedLaunch } | { first: false; problem: string }> {
  let text: string | null;
  try {
    text = await readOptional(file);
  } catch (error) {
    return { first: false, problem: `the launch record cannot be read (${(error as NodeJS.ErrnoException).code})` };
  }
  if (text === null) return { first: true };
  try {
    return { first: false, record: parseRecordedLaunch(text) };
  } catch (error) {
    return { first: false, problem: `the launch record is not usable (${(error as Error).message})` };
  }
}

/**
 * The files whose identity a stop records and the next start checks:
 * Goose's database (sessions.db and its write-ahead log, where every write
 * lands; the -shm index changes when a mere reader opens the database, and
 * holds no data of its own) and the chat with its owner record.
 */
export function watchedFiles(gooseDb: string, stateFile: string): string[] {
  const chat = chatFiles(stateFile);
  return [gooseDb, `${gooseDb}-wal`, chat.state, chat.owner];
}

/** Each watched file's identity now, by path. */
export async function identities(files: string[]): Promise<Record<string, FileIdentity>> {
  const found = await Promise.all(files.map((file) => fileIdentity(file)));
  return Object.fromEntries(files.map((file, i) => [file, found[i] as FileIdentity]));
}

/**
 * Adds what the stop saw to the record of the launch it stopped. Plain file
 * work: the stop runs no Goose process. A record the stop could not act on
 * is left as it is.
 */
export async function recordStopFindings(file: string, findings: StopFindings): Promise<boolean> {
  let record: Fields;
  try {
    record = Fields.of(JSON.parse((await readOptional(file)) ?? "null"), "launch record");
    launchedFrom(record);
  } catch {
    return false;
  }
  await writeFileAtomic(file, `${JSON.stringify({ ...record.members(), stopped: findings }, null, 2)}\n`, {
    mode: 0o600,
  });
  return true;
}

/** Records what this start launched and why, for the stop script and for the user reading the module folder. */
export async function writeLaunchRecord(file: string, record: LaunchRecord): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

/** The part of the launch record the stop script acts on. */
export interface Launched {
  port: number;
  pidFile: string;
  stateFile: string;
  stateBackup: string | null;
  /** Whether the start confirmed state persistence; false when it left no record. */
  persistence: boolean;
  persistenceReason: string;
  /** Goose's sessions.db as the start found it; null in a record that does not say (StopFindings are then not written). */
  gooseDb: string | null;
}

function parseRecord(text: string): Launched {
  return launchedFrom(Fields.of(JSON.parse(text), "launch record"));
}

function launchedFrom(record: Fields): Launched {
  const backup = record.nullableString("state_backup");
  return {
    port: record.integer("port", 1, 65535),
    pidFile: record.path("pid_file"),
    stateFile: record.path("state_file"),
    stateBackup: backup,
    persistence: record.boolean("persistence"),
    persistenceReason: record.string("persistence_reason"),
    gooseDb: gooseDbOf(record),
  };
}

/** The record's goose.db, or null: the stop acts on the rest of a record without it. */
function gooseDbOf(record: Fields): string | null {
  try {
    return record.object("goose").path("db");
  } catch {
    return null;
  }
}

/**
 * What the stop acts on. The launch record is the one start-to-stop contract:
 * it says what the start really launched (port, PID file, state file, whether
 * persistence was confirmed), which can differ from the settings when the
 * template changed in between. Only when there is no usable record, because the
 * start never reached the launch, does the stop fall back to its settings, and
 * then it treats persistence as unconfirmed: it saves nothing and restores no
 * backup.
 */
export async function readLaunchRecord(
  file: string,
  settings: { port: number; pidFile: string; stateFile: string },
): Promise<{ launched: Launched; note: string | null }> {
  const fallback = (why: string) => ({
    launched: { ...settings, stateBackup: null, persistence: false, persistenceReason: why, gooseDb: null },
    note: why,
  });
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fallback(
      code === "ENOENT"
        ? "the start script left no launch record, so persistence was never confirmed"
        : `the launch record ${file} cannot be read (${code})`,
    );
  }
  try {
    return { launched: parseRecord(text), note: null };
  } catch (error) {
    return fallback(
      `the launch record ${file} is not usable (${(error as Error).message}); it was written by another module version or edited`,
    );
  }
}

/**
 * Adds the supervisor's reason for giving up to the record of the launch it
 * gave up on, so the user finds it where the start's decisions are. A record
 * the stop could not act on is left as it is: the error names the field.
 * The sh supervisor does the same when the runtime changed
 * (record_give_up in supervisor/supervisor.sh).
 */
export async function recordSupervisorGaveUp(file: string, reason: string, now = Date.now()): Promise<void> {
  const record = Fields.of(JSON.parse(await readFile(file, "utf8")), "launch record");
  launchedFrom(record);
  const supervisor: LaunchRecord["supervisor"] = { gave_up_at: new Date(now).toISOString(), reason };
  await writeFileAtomic(file, `${JSON.stringify({ ...record.members(), supervisor }, null, 2)}\n`, { mode: 0o600 });
}

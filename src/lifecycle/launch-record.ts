import path from "node:path";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { type FileIdentity, fileIdentity, parseIdentity, readOptional } from "../lib/files.js";
import { Fields } from "../lib/json-fields.js";
import type { ModulePaths } from "../settings/config.js";
import { chatFiles } from "./chat-file.js";

/**
 * What a launch decided, so the stop acts on the same answer instead of
 * guessing, and the next start may skip a question to Goose. Only the launch
 * writes it (launch/launch.ts, for a start and for each supervisor's restart,
 * which runs the same code); the stop and the next start read it. As the
 * stop's findings below, it is a contract between the two sides, so it
 * depends on neither. Its keys are snake_case because the user may read it.
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
 * What a stop saw once the last launch's Goose had left by itself: idle at
 * its prompt with no turn run during the stop, it left on the typed /exit
 * and AgentAPI with it, so Goose's database was closed. `files`: the
 * identity of Goose's database files and of the chat files right after, by
 * path. Only the stop writes it, to a file of its own, only then; only the
 * next start reads it. `launch` is the `started_at` of the launch record it
 * is about: findings about another launch count as none.
 */
export interface StopFindings {
  launch: string;
  at: string;
  files: Record<string, FileIdentity>;
}

const CONVERSATION_ENDS = ["answered", "continued", "unanswered", "unknown"] as const;
const TURN_ACTIONS = ["none", "continue", "wait"] as const;

function parseLaunchRecord(text: string): LaunchRecord {
  const record = Fields.of(JSON.parse(text), "launch record");
  const goose = record.object("goose");
  const turn = record.object("interrupted_turn");
  return {
    persistence: record.boolean("persistence"),
    persistence_reason: record.string("persistence_reason"),
    agentapi_binary: record.string("agentapi_binary"),
    agentapi_version: record.nullableString("agentapi_version"),
    port: record.integer("port", 1, 65535),
    state_file: record.path("state_file"),
    state_backup: record.nullableString("state_backup"),
    pid_file: record.path("pid_file"),
    session_name: record.string("session_name"),
    mode: record.oneOf("mode", ["cold", "warm"] as const),
    interrupted_turn: { action: turn.oneOf("action", TURN_ACTIONS), reason: turn.string("reason") },
    started_at: record.string("started_at"),
    goose: {
      db: goose.path("db"),
      binary: goose.path("binary"),
      binary_identity: parseIdentity(goose.object("binary_identity")),
      folder: goose.path("folder"),
      session_id: goose.nullableString("session_id"),
      messages: goose.nullableInteger("messages", 0, Number.MAX_SAFE_INTEGER),
      working_dir: goose.nullableString("working_dir"),
      conversation_end: goose.oneOf("conversation_end", CONVERSATION_ENDS),
    },
  };
}

export type RecordRead = { first: true } | { first: false; record: LaunchRecord } | { first: false; problem: string };

/**
 * The launch record, every field checked: `first` when there certainly is
 * none (the module never launched Goose here), else the record or why it
 * cannot be used.
 */
export async function readLaunchRecord(file: string): Promise<RecordRead> {
  let text: string | null;
  try {
    text = await readOptional(file);
  } catch (error) {
    return {
      first: false,
      problem: `the launch record ${file} cannot be read (${(error as NodeJS.ErrnoException).code})`,
    };
  }
  if (text === null) return { first: true };
  try {
    return { first: false, record: parseLaunchRecord(text) };
  } catch (error) {
    return {
      first: false,
      problem: `the launch record ${file} is not usable (${(error as Error).message}); it was written by another module version or edited`,
    };
  }
}

/** Records what this launch did and why, for the stop, the next start and the user reading the module folder. */
export async function writeLaunchRecord(file: string, record: LaunchRecord): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
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

export function stopFindingsFile(paths: ModulePaths): string {
  return path.join(paths.dir, "stop-findings.json");
}

/** Plain file work: the stop runs no Goose process. */
export async function writeStopFindings(file: string, findings: StopFindings): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(findings, null, 2)}\n`, { mode: 0o600 });
}

/** The last stop's findings; null when there are none it can read. */
export async function readStopFindings(file: string): Promise<StopFindings | null> {
  try {
    const found = Fields.of(JSON.parse((await readOptional(file)) ?? "null"), "stop findings");
    const files: Record<string, FileIdentity> = Object.create(null);
    for (const [name, entry] of Object.entries(found.objectMap("files")))
      files[name] = parseIdentity(Fields.of(entry, `stop findings.files.${name}`));
    return { launch: found.string("launch"), at: found.string("at"), files };
  } catch {
    return null;
  }
}

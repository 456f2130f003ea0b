import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { Fields } from "../lib/json-fields.js";

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
  /** Set when the supervisor gave up restarting this launch's AgentAPI. */
  supervisor?: { gave_up_at: string; reason: string };
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
  };
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
    launched: { ...settings, stateBackup: null, persistence: false, persistenceReason: why },
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

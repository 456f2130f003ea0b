import { readFile } from "node:fs/promises";
import type { TurnDecision } from "./interrupted-turn.js";
import { writeFileAtomic } from "./safe-fs.js";

/** What the start script decided, so the stop script acts on the same answer instead of guessing. */
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
  interrupted_turn: TurnDecision;
  started_at: string;
}

export async function writeLaunchRecord(file: string, record: LaunchRecord): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

export async function readLaunchRecord(file: string): Promise<LaunchRecord | null> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as LaunchRecord;
  } catch {
    return null;
  }
}

// Goose's own sessions database: what was delivered and answered. The same
// counts hold for the double and a real Goose, because both write it.
import { existsSync } from "node:fs";
import { type RunResult, run } from "./exec.js";

/**
 * Runs one SELECT on Goose's database with the sqlite3 CLI, read-only
 * (`-readonly`, a `mode=ro` URI): the database is never written. (SQLite may
 * create the empty -wal/-shm companions a WAL reader needs.) No database yet,
 * or no tables yet: no rows. The SQL must hold no test data: filter in code.
 */
async function queryGooseDb(db: string, sql: string): Promise<Array<Record<string, unknown>>> {
  if (!existsSync(db)) return [];
  const uri = `file:${db.split("/").map(encodeURIComponent).join("/")}?mode=ro`;
  let result: RunResult;
  try {
    result = await run("sqlite3", ["-readonly", "-json", "-cmd", ".timeout 10000", uri, sql], { timeoutMs: 30_000 });
  } catch (error) {
    throw new Error(
      `cannot run the sqlite3 CLI to read ${db} (install it, e.g. apt-get install sqlite3): ${(error as Error).message}`,
    );
  }
  if (result.code !== 0) {
    if (/no such table/i.test(result.stderr)) return [];
    throw new Error(`sqlite3 could not read ${db} (exit ${result.code}): ${result.stderr.trim()}`);
  }
  const out = result.stdout.trim();
  return out === "" ? [] : (JSON.parse(out) as Array<Record<string, unknown>>);
}

export interface GooseMessage {
  id: number;
  sessionId: string;
  role: string;
  /** The text parts of content_json, joined with "\n" ("" for a message with no text, such as a tool result). */
  text: string;
  /** False for rows Goose hides from the user (metadata_json `$.userVisible` false: its `<turn-context>` rows). */
  userVisible: boolean;
}

function contentText(json: unknown): string {
  try {
    const content = JSON.parse(String(json)) as unknown;
    if (!Array.isArray(content)) return typeof content === "string" ? content : "";
    return content
      .filter((part) => part && typeof part === "object" && part.type === "text" && typeof part.text === "string")
      .map((part) => part.text as string)
      .join("\n");
  } catch {
    return "";
  }
}

function userVisible(json: unknown): boolean {
  if (json === null || json === undefined) return true;
  try {
    return (JSON.parse(String(json)) as { userVisible?: unknown } | null)?.userVisible !== false;
  } catch {
    return true;
  }
}

/** Every message row across all sessions (optionally one role), oldest first. */
export async function gooseMessages(db: string, role?: "user" | "assistant"): Promise<GooseMessage[]> {
  const where = role === undefined ? "" : ` WHERE role = '${role === "user" ? "user" : "assistant"}'`;
  const rows = await queryGooseDb(
    db,
    `SELECT id, session_id, role, content_json, metadata_json FROM messages${where} ORDER BY id`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    sessionId: String(r.session_id),
    role: String(r.role),
    text: contentText(r.content_json),
    userVisible: userVisible(r.metadata_json),
  }));
}

/**
 * How many user-visible `role='user'` rows, across all sessions, carry this
 * text: equal to `match`, or accepted by it when it is a function. Goose writes
 * these rows when Enter is pressed; its hidden `<turn-context>` rows never count.
 */
export async function gooseDeliveries(db: string, match: string | ((text: string) => boolean)): Promise<number> {
  const accepts = typeof match === "string" ? (text: string) => text === match : match;
  return (await gooseMessages(db, "user")).filter((m) => m.userVisible && accepts(m.text)).length;
}

/** How many `role='assistant'` rows there are, across all sessions (Goose writes one when a turn ends). */
export async function gooseReplies(db: string): Promise<number> {
  const [row] = await queryGooseDb(db, "SELECT COUNT(*) AS n FROM messages WHERE role = 'assistant'");
  return Number(row?.n ?? 0);
}

/** Each session's name and the permission mode Goose stored for it (sessions.goose_mode, schema v8 and later). */
export async function gooseSessionModes(db: string): Promise<Array<{ name: string; mode: string }>> {
  const rows = await queryGooseDb(db, "SELECT name, goose_mode FROM sessions ORDER BY created_at");
  return rows.map((r) => ({ name: String(r.name), mode: String(r.goose_mode) }));
}

/** A Goose ExtensionConfig as a session saved it: `name`, `type`, and for stdio ones `cmd` and `envs`, among others. */
export interface SavedExtension {
  name: string;
  type: string;
  envs?: Record<string, string>;
  [field: string]: unknown;
}

/** The extensions each session saved (extension_data's enabled_extensions.v0): what Goose loaded, in session order. */
export async function gooseSessionExtensionConfigs(db: string): Promise<SavedExtension[][]> {
  const rows = await queryGooseDb(db, "SELECT extension_data FROM sessions ORDER BY created_at");
  return rows.map((r) => {
    const saved = JSON.parse(String(r.extension_data ?? "{}"))["enabled_extensions.v0"];
    return (saved?.extensions ?? []) as SavedExtension[];
  });
}

/** The names of the extensions each session saved, in session order. */
export async function gooseSessionExtensions(db: string): Promise<string[][]> {
  return (await gooseSessionExtensionConfigs(db)).map((saved) => saved.map((e) => e.name));
}

/**
 * The ids of the user and scheduled sessions named `name` (not sub-agents'),
 * read from Goose's database: the most recently active first (its latest
 * message, or its updated_at when it has none), then the highest id, which is
 * the one `goose session --resume --name` picks (list_sessions_matching in
 * crates/goose/src/session/session_manager.rs, aaif-goose/goose v1.46.1).
 * More than one means a resume was lost and a new session made instead.
 */
export async function gooseSessionsNamed(db: string, name: string): Promise<string[]> {
  const rows = await queryGooseDb(
    db,
    "SELECT s.id, s.name, s.session_type, COALESCE((SELECT MAX(m.created_timestamp) FROM messages m WHERE m.session_id = s.id), CAST(strftime('%s', s.updated_at) AS INTEGER)) AS last FROM sessions s",
  );
  return rows
    .filter((r) => r.name === name && (r.session_type === "user" || r.session_type === "scheduled"))
    .sort((a, b) => Number(b.last ?? 0) - Number(a.last ?? 0) || String(b.id).localeCompare(String(a.id)))
    .map((r) => String(r.id));
}

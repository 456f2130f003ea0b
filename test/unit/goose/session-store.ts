// Goose's session store as the unit tests build it: a sessions.db shaped like
// schema 15 (crates/goose/src/session/session_manager.rs in aaif-goose/goose
// at v1.46.1), written with the sqlite3 CLI, and `goose session export` output.
import { run } from "../../../src/lib/exec.js";

export const SQLITE = "/usr/bin/sqlite3";
export const VISIBLE = { userVisible: true, agentVisible: true };
export const CTX = { userVisible: false, agentVisible: true, turnContext: true };
export const AGENT_ONLY = { userVisible: false, agentVisible: true };
/** How Goose marks a failed model call's message: shown, never sent to the model (Message::with_error). */
export const USER_ONLY = { userVisible: true, agentVisible: false };
export const TC = "<turn-context/>";

/** A SessionTail, positionally. */
export const tail = (
  n: number,
  role: string | null,
  text: string | null,
  id: string | null,
  unanswered = false,
  modelError: { kind: string; userText: string; firstMessage: boolean } | null = null,
) => {
  return {
    visibleCount: n,
    lastVisibleRole: role,
    lastVisibleUserText: text,
    lastVisibleId: id,
    unanswered,
    modelError,
  };
};

export type Sess = { id: string; name?: string; description?: string; type?: string; updated?: string };
export type Msg = { session: string; role: string; content: string; at: number; meta?: object | null; id?: string };
export const s = (id: string, name = "task", updated?: string, more?: Partial<Sess>): Sess => {
  return { id, name, updated, ...more };
};
/** A message row; content starting with "[" is raw content JSON, anything else one text item; meta null is SQL NULL. */
export const m = (session: string, role: string, t: string, at: number, meta?: object | null, id?: string): Msg => {
  const content = t.startsWith("[") ? t : JSON.stringify([{ type: "text", text: t }]);
  return { session, role, content, at, meta, id };
};

const q = (s: string | null) => (s === null ? "NULL" : `'${s.replace(/'/g, "''")}'`);

export async function buildSessionsDb(file: string, sessions: Sess[], messages: Msg[]): Promise<void> {
  const sql = [
    "PRAGMA journal_mode=WAL;",
    "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);",
    "INSERT INTO schema_version (version) VALUES (15);",
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}', goose_mode TEXT NOT NULL DEFAULT 'auto', parent_session_id TEXT);",
    "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);",
    ...sessions.map(
      (s) =>
        `INSERT INTO sessions (id, name, description, session_type, working_dir, updated_at) VALUES (${q(s.id)}, ${q(s.name ?? "")}, ${q(s.description ?? "")}, ${q(s.type ?? "user")}, '/home/coder/${s.id}', ${q(s.updated ?? "2026-01-01 00:00:00")});`,
    ),
    ...messages.map(
      (m, i) =>
        `INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES (${q(m.id ?? `msg_${m.session}_${i}`)}, ${q(m.session)}, ${q(m.role)}, ${q(m.content)}, ${m.at}, ${m.meta === null ? "NULL" : q(JSON.stringify(m.meta ?? VISIBLE))});`,
    ),
  ].join("\n");
  const result = await run(SQLITE, ["-init", "/dev/null", "-batch", "-bail", file, sql]);
  if (result.code !== 0) throw new Error(`building the test database failed: ${result.stderr}`);
}

/** What `goose session export --format json` prints: the Session object, pretty-printed. */
export const exported = (conversation: unknown, id: unknown = "20261122_1") =>
  JSON.stringify({ id, name: "task", message_count: 0, conversation }, null, 2);
/** A message of an export; a null text is a tool result. */
export const msg = (role: string, t: string | null, metadata: unknown = VISIBLE, id: string | null = `msg_${t}`) => {
  const content = t === null ? [{ type: "toolResponse", id: "t1" }] : [{ type: "text", text: t }];
  return { id, role, created: 1_800_000_000, content, metadata };
};

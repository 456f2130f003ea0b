import { access } from "node:fs/promises";
import path from "node:path";
import { commandPath, type RunResult, run } from "../lib/exec.js";

/** What Goose's own session store says about the session the module names. */
export type SessionProbe =
  | { kind: "found"; id: string; messages: number; workingDir: string | null; source: string }
  | { kind: "absent"; source: string }
  | { kind: "unknown"; reason: string };

interface ListedSession {
  id?: unknown;
  name?: unknown;
  description?: unknown;
  session_type?: unknown;
  message_count?: unknown;
  working_dir?: unknown;
  updated_at?: unknown;
  last_message_at?: unknown;
}

const RESUMABLE_TYPES = new Set(["user", "scheduled"]);

function activity(session: ListedSession): string {
  return String(session.last_message_at ?? session.updated_at ?? "");
}

/**
 * Finds the session `goose session --resume --name X` would pick in the output
 * of `goose session list --format json`: an exact match on name or id among
 * user and scheduled sessions, the most recently active first, then the
 * highest id (list_sessions_matching orders by last activity DESC, id DESC;
 * crates/goose/src/session/session_manager.rs in aaif-goose/goose). Goose
 * 1.10-1.11 used `description` where later versions use `name`.
 */
export function findNamedSession(listJson: string, name: string, source = "goose session list"): SessionProbe {
  const parsed: unknown = JSON.parse(listJson.trim() === "" ? "[]" : listJson);
  if (!Array.isArray(parsed)) throw new Error("goose session list --format json did not print a JSON array");
  const matches = (parsed as ListedSession[])
    .filter((s) => s && typeof s === "object")
    .filter((s) => s.session_type === undefined || RESUMABLE_TYPES.has(String(s.session_type)))
    .filter((s) => s.id === name || s.name === name || (s.name === undefined && s.description === name))
    .sort((a, b) => activity(b).localeCompare(activity(a)) || String(b.id).localeCompare(String(a.id)));
  const best = matches[0];
  if (!best) return { kind: "absent", source };
  return {
    kind: "found",
    id: String(best.id),
    messages: Number(best.message_count ?? 0) || 0,
    workingDir: typeof best.working_dir === "string" ? best.working_dir : null,
    source,
  };
}

/** Where Goose keeps sessions.db: under GOOSE_PATH_ROOT when absolute, else XDG (crates/goose/src/config/paths.rs in aaif-goose/goose). */
export function gooseSessionsDb(env: NodeJS.ProcessEnv, home: string): string {
  const root = env.GOOSE_PATH_ROOT;
  if (root && path.isAbsolute(root)) return path.join(root, "data", "sessions", "sessions.db");
  const dataHome =
    env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, ".local", "share");
  return path.join(dataHome, "goose", "sessions", "sessions.db");
}

/** The end of a session's conversation as the user sees it. */
export interface SessionTail {
  /** Messages the user can see; Goose's message_count. */
  visibleCount: number;
  lastVisibleRole: string | null;
  /** The text items of the last visible message joined by newlines, when it is a user message ("" for a tool result); else null. */
  lastVisibleUserText: string | null;
  lastVisibleId: string | null;
  /** The last visible message is the user's and no assistant message, visible or hidden, came after it: an interrupted turn. */
  unanswered: boolean;
}

export type TailRead = { kind: "read"; tail: SessionTail; source: string } | { kind: "unknown"; reason: string };

// Goose stores message times in seconds, some older rows in milliseconds
// (MILLISECOND_TIMESTAMP_THRESHOLD and normalized_message_timestamp_sql), and
// counts a message as visible unless metadata_json says userVisible: false
// (user_visible_message_sql); both in session_manager.rs, aaif-goose/goose.
const MESSAGE_SECONDS =
  "CASE WHEN m.created_timestamp > 10000000000 THEN m.created_timestamp / 1000 ELSE m.created_timestamp END";
const USER_VISIBLE = "COALESCE(json_extract(m.metadata_json, '$.userVisible'), 1) != 0";

/**
 * The read-only query behind the sqlite3 fallback, for schema 4 and later
 * (Goose 1.12+). It picks the session `--resume --name X` picks: an exact
 * name or id match (a row with an empty name answers to its old description)
 * among user and scheduled sessions, ordered like list_sessions_matching by
 * the last message's time (the session's updated_at when it has none), then
 * id. For that session it returns the user-visible message count and the last
 * visible message. The name travels as hex, never as SQL text.
 */
export function sessionQuery(name: string): string {
  const hex = Buffer.from(name, "utf8").toString("hex");
  const match = `CAST(X'${hex}' AS TEXT)`;
  return [
    "WITH chosen AS (",
    "  SELECT s.id AS id, s.working_dir AS working_dir FROM sessions s",
    `  WHERE (s.name = ${match} OR s.id = ${match} OR (s.name = '' AND s.description = ${match}))`,
    "    AND s.session_type IN ('user', 'scheduled')",
    `  ORDER BY COALESCE((SELECT MAX(${MESSAGE_SECONDS}) FROM messages m WHERE m.session_id = s.id), CAST(strftime('%s', s.updated_at) AS INTEGER)) DESC, s.id DESC`,
    "  LIMIT 1",
    "), visible AS (",
    "  SELECT m.id AS seq, m.message_id AS message_id, m.role AS role, m.content_json AS content_json",
    `  FROM messages m JOIN chosen c ON m.session_id = c.id WHERE ${USER_VISIBLE}`,
    "), last AS (SELECT * FROM visible ORDER BY seq DESC LIMIT 1)",
    "SELECT c.id AS id, c.working_dir AS working_dir,",
    "  (SELECT COUNT(*) FROM visible) AS visible_messages,",
    "  (SELECT role FROM last) AS last_role,",
    "  (SELECT message_id FROM last) AS last_message_id,",
    "  (SELECT group_concat(json_extract(j.value, '$.text'), char(10)) FROM last, json_each(last.content_json) j WHERE json_extract(j.value, '$.type') = 'text') AS last_text,",
    "  (SELECT COUNT(*) FROM messages m WHERE m.session_id = c.id AND m.role = 'assistant' AND m.id > (SELECT seq FROM last)) AS assistant_after",
    "FROM chosen c;",
  ].join("\n");
}

export interface SessionRow {
  id: string;
  working_dir: string | null;
  visible_messages: number;
  last_role: string | null;
  last_message_id: string | null;
  last_text: string | null;
  assistant_after: number;
}

/** The conversation's end, from one row of sessionQuery. */
export function tailFromRow(row: SessionRow): SessionTail {
  const lastIsUser = row.last_role === "user";
  return {
    visibleCount: Number(row.visible_messages) || 0,
    lastVisibleRole: row.last_role ?? null,
    lastVisibleUserText: lastIsUser ? (row.last_text ?? "") : null,
    lastVisibleId: row.last_message_id ?? null,
    unanswered: lastIsUser && Number(row.assistant_after) === 0,
  };
}

interface ExportedMessage {
  id?: unknown;
  role?: unknown;
  content?: unknown;
  metadata?: { userVisible?: unknown } | null;
}

function textOf(message: ExportedMessage): string {
  if (!Array.isArray(message.content)) return "";
  return message.content
    .filter((item): item is { type: string; text: string } => item?.type === "text" && typeof item.text === "string")
    .map((item) => item.text)
    .join("\n");
}

/**
 * Reads `goose session export --format json`: the Session object, pretty
 * printed, with `conversation` a list of messages `{id, role, created,
 * content: [{type: "text", text}, ...], metadata: {userVisible,
 * agentVisible}}` (handle_session_export in crates/goose-cli/src/commands/
 * session.rs; Message and MessageMetadata in crates/goose/src/conversation/
 * message.rs; aaif-goose/goose). A message without metadata is visible, as
 * MessageMetadata's default is. Throws when the text is not such an export.
 */
export function parseSessionExport(text: string): { id: string | null; tail: SessionTail } {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error("the export is not a JSON object");
  const session = parsed as { id?: unknown; conversation?: unknown };
  if (session.conversation !== null && session.conversation !== undefined && !Array.isArray(session.conversation))
    throw new Error("its conversation is not a list");
  const messages = ((session.conversation as unknown[] | null | undefined) ?? []).filter(
    (m): m is ExportedMessage => typeof m === "object" && m !== null,
  );
  let last = -1;
  let visibleCount = 0;
  messages.forEach((message, i) => {
    if (message.metadata?.userVisible === false) return;
    visibleCount++;
    last = i;
  });
  const lastMessage = last === -1 ? null : (messages[last] as ExportedMessage);
  const role = typeof lastMessage?.role === "string" ? lastMessage.role : null;
  const lastIsUser = role === "user";
  return {
    id: typeof session.id === "string" ? session.id : null,
    tail: {
      visibleCount,
      lastVisibleRole: role,
      lastVisibleUserText: lastIsUser && lastMessage ? textOf(lastMessage) : null,
      lastVisibleId: typeof lastMessage?.id === "string" ? lastMessage.id : null,
      unanswered: lastIsUser && !messages.slice(last + 1).some((m) => m.role === "assistant"),
    },
  };
}

/** A SQLite URI for a path: '%', '?' and '#' would otherwise end or garble the file name (sqlite.org/uri.html). */
export function sqliteReadOnlyUri(file: string): string {
  return `file:${file.split("/").map(encodeURIComponent).join("/")}?mode=ro`;
}

/** One line saying why a helper gave no usable answer. */
export function describeFailure(label: string, result: RunResult, timeoutMs: number): string {
  if (result.error !== undefined) return `${label} could not be started (${result.error})`;
  if (result.timedOut) return `${label} did not finish within ${timeoutMs / 1000} s`;
  if (result.truncated) return `${label} printed more than the module reads`;
  if (result.code === null) return `${label} was killed by ${result.signal ?? "a signal"}`;
  const lastLine = result.stderr.trim().split("\n").slice(-1)[0] ?? "";
  return `${label} exited ${result.code}${lastLine === "" ? "" : `: ${lastLine}`}`;
}

const LIST_TIMEOUT_MS = 60_000;
const EXPORT_TIMEOUT_MS = 60_000;
const SQLITE_TIMEOUT_MS = 30_000;
// A long session's export holds every message; beyond this it is not read.
const EXPORT_MAX_BYTES = 64 * 1024 * 1024;
const LIST_MAX_BYTES = 16 * 1024 * 1024;

/** The conversation's end from `goose session export`, which resolves the name like resume does. */
async function tailFromExport(opts: {
  goose: string;
  name: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): Promise<{ id: string | null; tail: SessionTail } | { problem: string }> {
  const label = "goose session export --format json";
  const result = await run(opts.goose, ["session", "export", "--name", opts.name, "--format", "json"], {
    env: opts.env,
    cwd: opts.cwd,
    timeoutMs: EXPORT_TIMEOUT_MS,
    maxBytes: EXPORT_MAX_BYTES,
  });
  if (result.code !== 0 || result.truncated) return { problem: describeFailure(label, result, EXPORT_TIMEOUT_MS) };
  try {
    return parseSessionExport(result.stdout);
  } catch (error) {
    return { problem: `${label} printed something that is not a session export (${(error as Error).message})` };
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Runs sessionQuery against the database read-only; the row is null when no session matches. */
export async function querySessionDb(
  sqlite: string,
  db: string,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<{ row: SessionRow | null } | { problem: string }> {
  // -init /dev/null: the shell would otherwise run the user's ~/.sqliterc first.
  const query = await run(
    sqlite,
    ["-init", "/dev/null", "-batch", "-bail", "-readonly", "-json", sqliteReadOnlyUri(db), sessionQuery(name)],
    { env, timeoutMs: SQLITE_TIMEOUT_MS },
  );
  if (query.code !== 0 || query.truncated) return { problem: describeFailure("sqlite3", query, SQLITE_TIMEOUT_MS) };
  try {
    const rows = JSON.parse(query.stdout.trim() || "[]") as SessionRow[];
    return { row: rows[0] ?? null };
  } catch (error) {
    return { problem: `sqlite3 printed something that is not JSON (${(error as Error).message})` };
  }
}

/** The session row from a read-only look at Goose's database, or why there is none. */
async function rowFromDb(opts: {
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
}): Promise<{ db: string; row: SessionRow | null; noDb?: true } | { problem: string }> {
  const db = gooseSessionsDb(opts.env, opts.home);
  if (!(await exists(db))) return { db, row: null, noDb: true };
  const sqlite = await commandPath("sqlite3", opts.env.PATH);
  if (!sqlite) return { problem: "sqlite3 is not installed for a read-only check" };
  const found = await querySessionDb(sqlite, db, opts.name, opts.env);
  return "problem" in found ? found : { db, row: found.row };
}

/**
 * Asks Goose itself first (sqlite3 is missing from many images); falls back to
 * a read-only look at the database, and reports "unknown" rather than guess.
 * The message count is Goose's message_count: user-visible messages only.
 */
export async function probeSession(opts: {
  goose: string;
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
}): Promise<SessionProbe> {
  const label = "goose session list --format json";
  const cli = await run(opts.goose, ["session", "list", "--format", "json"], {
    env: opts.env,
    cwd: opts.cwd,
    timeoutMs: LIST_TIMEOUT_MS,
    maxBytes: LIST_MAX_BYTES,
  });
  let cliProblem = describeFailure(label, cli, LIST_TIMEOUT_MS);
  if (cli.code === 0 && !cli.truncated) {
    try {
      return findNamedSession(cli.stdout, opts.name);
    } catch (error) {
      cliProblem = `goose session list printed something that is not a session list (${(error as Error).message})`;
    }
  }
  const fromDb = await rowFromDb(opts);
  if ("problem" in fromDb) return { kind: "unknown", reason: `${cliProblem}; ${fromDb.problem}` };
  if (fromDb.noDb) return { kind: "absent", source: `no Goose database at ${fromDb.db}` };
  if (fromDb.row === null) return { kind: "absent", source: `sqlite3 read of ${fromDb.db} (after: ${cliProblem})` };
  const tail = tailFromRow(fromDb.row);
  return {
    kind: "found",
    id: fromDb.row.id,
    messages: tail.visibleCount,
    workingDir: fromDb.row.working_dir,
    source: `sqlite3 read of ${fromDb.db}`,
  };
}

/**
 * How the conversation of session `name` ends: from `goose session export`
 * (session list carries no roles), else from the database with sqlite3. With
 * `expectedId` (the probe's id), an answer about another session is unknown.
 */
export async function readConversationTail(opts: {
  goose: string;
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
  expectedId?: string;
}): Promise<TailRead> {
  const wrongSession = (id: string | null) => opts.expectedId !== undefined && id !== opts.expectedId;
  const exported = await tailFromExport(opts);
  let exportProblem: string;
  if ("problem" in exported) exportProblem = exported.problem;
  else if (wrongSession(exported.id))
    exportProblem = `goose session export returned session ${exported.id ?? "(no id)"}, not ${opts.expectedId}`;
  else return { kind: "read", tail: exported.tail, source: "goose session export" };

  const fromDb = await rowFromDb(opts);
  if ("problem" in fromDb) return { kind: "unknown", reason: `${exportProblem}; ${fromDb.problem}` };
  if (fromDb.row === null)
    return {
      kind: "unknown",
      reason: `${exportProblem}; ${fromDb.noDb ? `no Goose database at ${fromDb.db}` : `no session "${opts.name}" in ${fromDb.db}`}`,
    };
  if (wrongSession(fromDb.row.id))
    return {
      kind: "unknown",
      reason: `${exportProblem}; the database's session "${opts.name}" is ${fromDb.row.id}, not ${opts.expectedId}`,
    };
  return { kind: "read", tail: tailFromRow(fromDb.row), source: `sqlite3 read of ${fromDb.db}` };
}

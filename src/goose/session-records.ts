// What Goose's session store says, read from its own outputs: the JSON of
// `goose session list` and `goose session export`, and a row of sessions.db.
// Pure parsing; goose/sessions.ts runs Goose and SQLite to get them.
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

/** What the module reads from `goose session export --format json`. */
export interface SessionExport {
  id: string | null;
  workingDir: string | null;
  tail: SessionTail;
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
export function parseSessionExport(text: string): SessionExport {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error("the export is not a JSON object");
  const session = parsed as { id?: unknown; working_dir?: unknown; conversation?: unknown };
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
    workingDir: typeof session.working_dir === "string" ? session.working_dir : null,
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

// What Goose's session store says, read from its own outputs: the JSON of
// `goose session list` and `goose session export`, and a row of sessions.db.
// Pure parsing; goose/sessions.ts runs Goose and SQLite to get them.
/** Sessions that share the module's name, in the order `goose session --resume --name` ranks them. */
export interface Namesakes {
  ids: string[];
  /** The one a resume by name would take: the most recently active. */
  goosePick: string;
}

/** What Goose's own session store says about the session the module names. */
export type SessionProbe =
  | { kind: "found"; id: string; messages: number; workingDir: string | null; source: string; namesakes?: Namesakes }
  | { kind: "absent"; source: string }
  | { kind: "unknown"; reason: string };

/** One entry of `goose session list --format json` (observed keys, Goose 1.46.1). */
export interface ListedSession {
  id?: unknown;
  name?: unknown;
  description?: unknown;
  user_set_name?: unknown;
  session_type?: unknown;
  message_count?: unknown;
  working_dir?: unknown;
  updated_at?: unknown;
  last_message_at?: unknown;
}

const RESUMABLE_TYPES = new Set(["user", "scheduled"]);

export function activity(session: ListedSession): string {
  return String(session.last_message_at ?? session.updated_at ?? "");
}

export const messagesOf = (session: ListedSession) => Number(session.message_count ?? 0) || 0;

/** Most recently active first, then the highest id (list_sessions_matching's ORDER BY). */
export function byActivity(a: ListedSession, b: ListedSession): number {
  return activity(b).localeCompare(activity(a)) || String(b.id).localeCompare(String(a.id));
}

/** The entries of `goose session list --format json`; throws when the text is not such a list. */
export function parseSessionList(listJson: string): ListedSession[] {
  const parsed: unknown = JSON.parse(listJson.trim() === "" ? "[]" : listJson);
  if (!Array.isArray(parsed)) throw new Error("goose session list --format json did not print a JSON array");
  return (parsed as unknown[]).filter((s): s is ListedSession => typeof s === "object" && s !== null);
}

/**
 * The session the module takes as the one named `name`, from `goose session
 * list --format json`: an exact match on name or id among user and scheduled
 * sessions (Goose 1.10-1.11 used `description` where later versions use
 * `name`). Goose's `--resume --name` ranks matches by last activity, then id
 * (list_sessions_matching in crates/goose/src/session/session_manager.rs,
 * aaif-goose/goose v1.46.1), and an empty session created after a
 * conversation outranks it. When several sessions share the name (earlier
 * versions of the module made a new one at each restart nobody typed in), the
 * module takes the most recently active one that holds messages, so a
 * conversation is never passed over for an empty namesake; with none holding
 * messages, Goose's own pick. The launch resumes it by id (buildGooseArgs).
 */
export function pickNamedSession(sessions: ListedSession[], name: string, source = "goose session list"): SessionProbe {
  const matches = sessions
    .filter((s) => s.session_type === undefined || RESUMABLE_TYPES.has(String(s.session_type)))
    .filter((s) => s.id === name || s.name === name || (s.name === undefined && s.description === name))
    .sort(byActivity);
  const goosePick = matches[0];
  if (!goosePick) return { kind: "absent", source };
  const best = matches.find((s) => messagesOf(s) > 0) ?? goosePick;
  const probe: SessionProbe = {
    kind: "found",
    id: String(best.id),
    messages: messagesOf(best),
    workingDir: typeof best.working_dir === "string" ? best.working_dir : null,
    source,
  };
  if (matches.length > 1) probe.namesakes = { ids: matches.map((s) => String(s.id)), goosePick: String(goosePick.id) };
  return probe;
}

/** pickNamedSession on the text of `goose session list --format json`. */
export function findNamedSession(listJson: string, name: string, source = "goose session list"): SessionProbe {
  return pickNamedSession(parseSessionList(listJson), name, source);
}

/** The log line for a name several sessions share: which one the start resumes, and why. */
export function describeNamesakes(name: string, probe: SessionProbe & { kind: "found" }): string | null {
  const namesakes = probe.namesakes;
  if (!namesakes) return null;
  const why =
    probe.messages > 0
      ? `the most recently active one holding messages (${probe.messages})`
      : "none holds a message, so the most recently active one";
  const goose =
    namesakes.goosePick === probe.id
      ? ""
      : `; goose session --resume --name would have taken the empty ${namesakes.goosePick}`;
  return `${namesakes.ids.length} Goose sessions are named "${name}" (${namesakes.ids.join(", ")}); resuming ${probe.id} by its id, ${why}${goose}`;
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
  /** The failed model call that ended the last turn, if one did. */
  modelError: ModelError | null;
}

/**
 * A turn that ended in a failed model call. Goose 1.47 stores the failure as
 * a visible assistant message whose content is `{type: "error", kind,
 * message}`, and never sends it to the model (Message::from_provider_error and
 * ErrorContent in crates/goose-provider-types/src/conversation/message.rs, and
 * crates/goose-provider-types/src/formats/openai.rs, which skips it;
 * aaif-goose/goose v1.47.0). Goose's own rule is
 * that a message holding an error ends no turn (ends_turn in
 * crates/goose-agent/src/operation.rs), so the readers take the last turn as
 * failed when at least one assistant message, visible or hidden, came after
 * the last visible user message, and every one of them holds an error. Its
 * message is the last visible user message that is no tool's result: a call
 * that fails after the model ran a tool fails the turn the user's message
 * began.
 */
export interface ModelError {
  /** MessageErrorKind as Goose writes it (authentication, contextLengthExceeded, creditsExhausted, other), of the last failure. */
  kind: string;
  /** The text items of the turn's message joined by newlines. */
  userText: string;
  /** The turn's message is the session's first visible message. */
  firstMessage: boolean;
}

/**
 * A message `!COMMAND` is no model turn: Goose runs COMMAND through its shell
 * tool and calls no model after it, storing the text, an assistant toolRequest
 * with id `bang_shell_<uuid>`, and the user's toolResponse with that id, which
 * ends a complete turn (BangShellOperation in crates/goose/src/agents/
 * state_machine/ops_bang_shell.rs, aaif-goose/goose at v1.46.1; observed with
 * Goose 1.46.1). A tool result with any other id answers the model's own call,
 * which the model has yet to answer.
 */
const BANG_SHELL_ID_PREFIX = "bang_shell_";

function endsBangTurn(content: unknown): boolean {
  return (
    Array.isArray(content) &&
    content.some(
      (item) =>
        item?.type === "toolResponse" && typeof item.id === "string" && item.id.startsWith(BANG_SHELL_ID_PREFIX),
    )
  );
}

export type TailRead = { kind: "read"; tail: SessionTail; source: string } | { kind: "unknown"; reason: string };

// Goose stores message times in seconds, some older rows in milliseconds
// (MILLISECOND_TIMESTAMP_THRESHOLD and normalized_message_timestamp_sql), and
// counts a message as visible unless metadata_json says userVisible: false
// (user_visible_message_sql); both in session_manager.rs, aaif-goose/goose.
const MESSAGE_SECONDS =
  "CASE WHEN m.created_timestamp > 10000000000 THEN m.created_timestamp / 1000 ELSE m.created_timestamp END";
const USER_VISIBLE = "COALESCE(json_extract(m.metadata_json, '$.userVisible'), 1) != 0";

// A content item of the given type in a row's content_json (alias `row`).
const HOLDS = (row: string, type: string) =>
  `EXISTS (SELECT 1 FROM json_each(${row}.content_json) j WHERE json_extract(j.value, '$.type') = '${type}')`;

/**
 * The read-only query behind the sqlite3 fallback, for schema 4 and later
 * (Goose 1.12+). It picks the session `--resume --name X` picks: an exact
 * name or id match (a row with an empty name answers to its old description)
 * among user and scheduled sessions, ordered like list_sessions_matching by
 * the last message's time (the session's updated_at when it has none), then
 * id. For that session it returns the user-visible message count, the last
 * visible message, and what ModelError needs: the error of a failed last
 * turn and the user message that began it. The name travels as hex, never as
 * SQL text.
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
    "), last AS (SELECT * FROM visible ORDER BY seq DESC LIMIT 1),",
    `users AS (SELECT v.*, NOT ${HOLDS("v", "toolResponse")} AS begins FROM visible v WHERE v.role = 'user'),`,
    "last_user AS (SELECT seq FROM users ORDER BY seq DESC LIMIT 1),",
    "turn AS (SELECT * FROM users WHERE begins ORDER BY seq DESC LIMIT 1),",
    "replies AS (",
    `  SELECT m.id AS seq, m.content_json AS content_json, ${HOLDS("m", "error")} AS failed`,
    "  FROM messages m JOIN chosen c ON m.session_id = c.id",
    "  WHERE m.role = 'assistant' AND m.id > (SELECT seq FROM last_user)",
    "), failure AS (SELECT * FROM replies ORDER BY seq DESC LIMIT 1)",
    "SELECT c.id AS id, c.working_dir AS working_dir,",
    "  (SELECT COUNT(*) FROM visible) AS visible_messages,",
    "  (SELECT role FROM last) AS last_role,",
    "  (SELECT message_id FROM last) AS last_message_id,",
    "  (SELECT group_concat(json_extract(j.value, '$.text'), char(10)) FROM last, json_each(last.content_json) j WHERE json_extract(j.value, '$.type') = 'text') AS last_text,",
    "  (SELECT COUNT(*) FROM messages m WHERE m.session_id = c.id AND m.role = 'assistant' AND m.id > (SELECT seq FROM last)) AS assistant_after,",
    `  (SELECT COUNT(*) FROM last, json_each(last.content_json) j WHERE json_extract(j.value, '$.type') = 'toolResponse' AND substr(json_extract(j.value, '$.id'), 1, ${BANG_SHELL_ID_PREFIX.length}) = '${BANG_SHELL_ID_PREFIX}') AS bang_results,`,
    "  (SELECT CASE WHEN json_type(j.value, '$.kind') = 'text' THEN json_extract(j.value, '$.kind') ELSE 'other' END",
    "    FROM failure, json_each(failure.content_json) j",
    "    WHERE json_extract(j.value, '$.type') = 'error' AND NOT EXISTS (SELECT 1 FROM replies WHERE NOT failed)",
    "    ORDER BY j.key LIMIT 1) AS error_kind,",
    "  (SELECT group_concat(json_extract(j.value, '$.text'), char(10)) FROM turn, json_each(turn.content_json) j WHERE json_extract(j.value, '$.type') = 'text') AS turn_text,",
    "  COALESCE((SELECT seq FROM turn) = (SELECT MIN(seq) FROM visible), 0) AS turn_first",
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
  /** Tool results of a `!` command in the last visible message. */
  bang_results: number;
  /** ModelError's kind, when the last turn failed; else null. */
  error_kind: string | null;
  /** The text items of the last visible user message that is no tool's result (null when it has none). */
  turn_text: string | null;
  /** 1 when that message is the session's first visible one. */
  turn_first: number;
}

/** The conversation's end, from one row of sessionQuery. */
export function tailFromRow(row: SessionRow): SessionTail {
  const lastIsUser = row.last_role === "user";
  return {
    visibleCount: Number(row.visible_messages) || 0,
    lastVisibleRole: row.last_role ?? null,
    lastVisibleUserText: lastIsUser ? (row.last_text ?? "") : null,
    lastVisibleId: row.last_message_id ?? null,
    unanswered: lastIsUser && Number(row.assistant_after) === 0 && !(Number(row.bang_results) > 0),
    modelError:
      row.error_kind === null
        ? null
        : { kind: row.error_kind, userText: row.turn_text ?? "", firstMessage: Number(row.turn_first) === 1 },
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

const holds = (message: ExportedMessage, type: string) =>
  Array.isArray(message.content) && message.content.some((item) => item?.type === type);

/** ModelError from an export's messages, `visible` the indexes of those the user sees. */
function failedTurn(messages: ExportedMessage[], visible: number[]): ModelError | null {
  const users = visible.filter((i) => messages[i]?.role === "user");
  const lastUser = users.at(-1);
  if (lastUser === undefined) return null;
  const replies = messages.slice(lastUser + 1).filter((m) => m.role === "assistant");
  const failure = replies.at(-1);
  if (failure === undefined || !replies.every((m) => holds(m, "error"))) return null;
  const error = (failure.content as Array<{ type?: unknown; kind?: unknown } | null>).find(
    (item) => item?.type === "error",
  );
  const turn = users.filter((i) => !holds(messages[i] as ExportedMessage, "toolResponse")).at(-1);
  return {
    kind: typeof error?.kind === "string" ? error.kind : "other",
    userText: turn === undefined ? "" : textOf(messages[turn] as ExportedMessage),
    firstMessage: turn !== undefined && turn === visible[0],
  };
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
  const visible = messages.flatMap((message, i) => (message.metadata?.userVisible === false ? [] : [i]));
  const last = visible.at(-1) ?? -1;
  const lastMessage = last === -1 ? null : (messages[last] as ExportedMessage);
  const role = typeof lastMessage?.role === "string" ? lastMessage.role : null;
  const lastIsUser = role === "user";
  return {
    id: typeof session.id === "string" ? session.id : null,
    workingDir: typeof session.working_dir === "string" ? session.working_dir : null,
    tail: {
      visibleCount: visible.length,
      lastVisibleRole: role,
      lastVisibleUserText: lastIsUser && lastMessage ? textOf(lastMessage) : null,
      lastVisibleId: typeof lastMessage?.id === "string" ? lastMessage.id : null,
      unanswered:
        lastIsUser &&
        !endsBangTurn(lastMessage?.content) &&
        !messages.slice(last + 1).some((m) => m.role === "assistant"),
      modelError: failedTurn(messages, visible),
    },
  };
}

/** A SQLite URI for a path: '%', '?' and '#' would otherwise end or garble the file name (sqlite.org/uri.html). */
export function sqliteReadOnlyUri(file: string): string {
  return `file:${file.split("/").map(encodeURIComponent).join("/")}?mode=ro`;
}

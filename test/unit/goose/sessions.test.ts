import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findNamedSession,
  parseSessionExport,
  type SessionRow,
  sessionQuery,
  sqliteReadOnlyUri,
  tailFromRow,
} from "../../../src/goose/session-records.js";
import {
  describeFailure,
  gooseSessionsDb,
  probeSession,
  querySessionDb,
  readConversationTail,
} from "../../../src/goose/sessions.js";
import { type RunResult, run } from "../../../src/lib/exec.js";

const SQLITE = "/usr/bin/sqlite3";
const VISIBLE = { userVisible: true, agentVisible: true };
const CTX = { userVisible: false, agentVisible: true, turnContext: true };
const AGENT_ONLY = { userVisible: false, agentVisible: true };
const TC = "<turn-context/>";
const text = (t: string) => JSON.stringify([{ type: "text", text: t }]);
type Tail = [count: number, role: string | null, text: string | null, id: string | null, unanswered?: boolean];
const tail = (...[n, role, text, id, unanswered = false]: Tail) => ({
  visibleCount: n,
  lastVisibleRole: role,
  lastVisibleUserText: text,
  lastVisibleId: id,
  unanswered,
});
const NO_TAIL = tail(0, null, null, null);

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "goose-sessions-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const q = (s: string | null) => (s === null ? "NULL" : `'${s.replace(/'/g, "''")}'`);
type Sess = { id: string; name?: string; description?: string; type?: string; updated?: string };
type Msg = { session: string; role: string; content: string; at: number; meta?: object | null; id?: string };
const s = (id: string, name = "task", updated?: string, more?: Partial<Sess>): Sess => ({ id, name, updated, ...more });
/** A message; content starting with "[" is raw content JSON, anything else one text item. */
const m = (session: string, role: string, t: string, at: number, meta?: object | null, id?: string): Msg => {
  return { session, role, content: t.startsWith("[") ? t : text(t), at, meta, id };
};

/** A database shaped like Goose's schema 15 (crates/goose/src/session/session_manager.rs at v1.46.1), written with the sqlite3 CLI. */
async function buildDb(file: string, sessions: Sess[], messages: Msg[]): Promise<void> {
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

let dbCount = 0;
async function db(sessions: Sess[], messages: Msg[], dir = `db-${dbCount++}`): Promise<string> {
  const file = path.join(root, dir, "sessions.db");
  await mkdir(path.dirname(file), { recursive: true });
  await buildDb(file, sessions, messages);
  return file;
}

async function query(file: string, name: string): Promise<SessionRow | null> {
  const found = await querySessionDb(SQLITE, file, name, process.env);
  if ("problem" in found) throw new Error(found.problem);
  return found.row;
}
const queryTail = async (file: string) => tailFromRow((await query(file, "task")) as SessionRow);

describe("sessionQuery against a real database", () => {
  it("counts only user-visible messages, as Goose's message_count does", async () => {
    const file = await db(
      [s("20261122_1")],
      [
        m("20261122_1", "user", "fix it", 100),
        m("20261122_1", "user", "<turn-context>t</turn-context>", 100, CTX),
        m("20261122_1", "assistant", "done", 101, undefined, "msg_reply"),
      ],
    );
    const row = await query(file, "task");
    const want = { visible_messages: 2, last_role: "assistant", last_message_id: "msg_reply", assistant_after: 0 };
    expect(row).toMatchObject({ id: "20261122_1", ...want });
    expect(tailFromRow(row as SessionRow)).toEqual(tail(2, "assistant", null, "msg_reply"));
  });

  it("reports an interrupted turn: the last visible user message has no reply after it", async () => {
    const parts = [
      { type: "text", text: "part one" },
      { type: "image", data: "x" },
      { type: "text", text: "part two" },
    ];
    const file = await db(
      [s("s1")],
      [
        m("s1", "user", "first", 100),
        m("s1", "user", TC, 100, CTX),
        m("s1", "assistant", "answer", 101),
        m("s1", "user", JSON.stringify(parts), 200, undefined, "msg_last"),
        m("s1", "user", TC, 200, CTX),
      ],
    );
    expect(await queryTail(file)).toEqual(tail(3, "user", "part one\npart two", "msg_last", true));
  });

  it("a hidden assistant message after the last user message answers the turn", async () => {
    const file = await db([s("s1")], [m("s1", "user", "go", 100), m("s1", "assistant", "summary", 101, AGENT_ONLY)]);
    expect(await queryTail(file)).toMatchObject({ visibleCount: 1, lastVisibleRole: "user", unanswered: false });
  });

  it("treats rows without metadata (older schemas) as visible", async () => {
    const file = await db([s("s1")], [m("s1", "user", "hi", 100, null)]);
    expect(await query(file, "task")).toMatchObject({ visible_messages: 1, last_role: "user" });
  });

  it("picks the session with the latest message, not the latest updated_at", async () => {
    const file = await db(
      [s("a", "task", "2026-11-22 12:00:00"), s("b", "task", "2026-01-01 00:00:00")],
      [m("a", "user", "a", 1_700_000_000), m("b", "user", "b", 1_800_000_000)],
    );
    expect((await query(file, "task"))?.id).toBe("b");
  });

  it("reads millisecond timestamps as Goose does", async () => {
    const file = await db(
      [s("seconds"), s("millis")],
      [m("seconds", "user", "s", 1_800_000_000), m("millis", "user", "m", 1_700_000_000_000)],
    );
    expect((await query(file, "task"))?.id).toBe("seconds");
  });

  it("falls back to updated_at for a session without messages, then to the highest id", async () => {
    const at = "2026-11-22 10:00:00";
    const file = await db(
      [
        s("old", "task", "2020-01-01 00:00:00"),
        s("empty-new", "task", at),
        s("tie-a", "tie", at),
        s("tie-b", "tie", at),
      ],
      [m("old", "user", "x", 1_600_000_000)],
    );
    const want = { id: "empty-new", visible_messages: 0, last_role: null, assistant_after: 0 };
    expect(await query(file, "task")).toMatchObject(want);
    expect((await query(file, "tie"))?.id).toBe("tie-b");
  });

  it("matches name or id exactly, the old description for unnamed rows, only user and scheduled sessions", async () => {
    const file = await db(
      [
        s("20261122_1", "task-10"),
        s("20261122_2", "", undefined, { description: "legacy" }),
        s("20261122_3", "sub", undefined, { type: "sub_agent" }),
        s("20261122_4", "sched", undefined, { type: "scheduled" }),
        s("20261122_5", "x' OR 1=1; --"),
      ],
      [],
    );
    for (const [name, id] of [
      ["task-1", undefined],
      ["20261122_1", "20261122_1"],
      ["legacy", "20261122_2"],
      ["sub", undefined],
      ["sched", "20261122_4"],
      ["x' OR 1=1; --", "20261122_5"],
      ["x", undefined],
    ])
      expect((await query(file, name as string))?.id).toBe(id);
  });

  it("opens a database whose path needs escaping in a URI", async () => {
    expect((await query(await db([s("s1")], [], "we?ird #dir %20"), "task"))?.id).toBe("s1");
  });

  it("carries the name as hex, so quotes cannot end the SQL string", () => {
    const sql = sessionQuery("x' OR 1=1; --");
    expect(sql).not.toContain("1=1");
    expect(sql).toContain(Buffer.from("x' OR 1=1; --").toString("hex"));
  });
});

const exported = (conversation: unknown, id: unknown = "20261122_1") =>
  JSON.stringify({ id, name: "task", message_count: 0, conversation }, null, 2);
const msg = (role: string, t: string | null, metadata: unknown = VISIBLE, id: string | null = `msg_${t}`) => {
  const content = t === null ? [{ type: "toolResponse", id: "t1" }] : [{ type: "text", text: t }];
  return { id, role, created: 1_800_000_000, content, metadata };
};
const noMeta = { id: "m1", role: "user", created: 1, content: ["a", "b"].map((text) => ({ type: "text", text })) };

describe("parseSessionExport", () => {
  it.each([
    [
      "answered turn",
      [msg("user", "fix"), msg("user", TC, CTX), msg("assistant", "done")],
      tail(2, "assistant", null, "msg_done"),
    ],
    [
      "interrupted turn behind a hidden turn-context row",
      [msg("user", "fix"), msg("assistant", "done"), msg("user", "again"), msg("user", TC, CTX)],
      tail(3, "user", "again", "msg_again", true),
    ],
    [
      "hidden assistant message after the last visible user message",
      [msg("user", "go"), msg("assistant", "summary", AGENT_ONLY)],
      tail(1, "user", "go", "msg_go"),
    ],
    [
      "a tool result as the last visible message",
      [msg("user", "go"), msg("assistant", "calling"), msg("user", null, undefined, null)],
      tail(3, "user", "", null, true),
    ],
    ["messages without metadata are visible", [noMeta], tail(1, "user", "a\nb", "m1", true)],
    ["empty conversation", [], NO_TAIL],
    ["null conversation", null, NO_TAIL],
  ])("%s", (_name, conversation, want) => {
    expect(parseSessionExport(exported(conversation))).toEqual({ id: "20261122_1", tail: want });
  });

  it.each([
    ["not JSON", "Session exported to x"],
    ["a list", "[]"],
    ["a conversation that is not a list", JSON.stringify({ id: "x", conversation: { messages: [] } })],
  ])("rejects %s", (_name, out) => {
    expect(() => parseSessionExport(out)).toThrow();
  });
});

it.each([
  ["/h/.local/share/goose/sessions/sessions.db", "file:/h/.local/share/goose/sessions/sessions.db?mode=ro"],
  ["/a?b/c#d/e%f g/x.db", "file:/a%3Fb/c%23d/e%25f%20g/x.db?mode=ro"],
])("sqliteReadOnlyUri %s", (file, uri) => expect(sqliteReadOnlyUri(file)).toBe(uri));

const result = (over: Partial<RunResult>): RunResult => {
  return { code: 0, signal: null, stdout: "", stderr: "", timedOut: false, truncated: false, ...over };
};

it.each([
  [result({ error: "spawn x ENOENT", code: null }), "x could not be started (spawn x ENOENT)"],
  [result({ timedOut: true, code: null, signal: "SIGKILL" }), "x did not finish within 2 s"],
  [result({ truncated: true }), "x printed more than the module reads"],
  [result({ code: null, signal: "SIGSEGV" }), "x was killed by SIGSEGV"],
  [
    result({ code: 1, stderr: "noise\nError: No session found with name 'N'\n" }),
    "x exited 1: Error: No session found with name 'N'",
  ],
  [result({ code: 2 }), "x exited 2"],
])("describeFailure %j", (r, line) => expect(describeFailure("x", r, 2000)).toBe(line));

describe("probeSession and readConversationTail with real processes", () => {
  async function fakeGoose(name: string, body: string): Promise<string> {
    const file = path.join(root, name);
    await writeFile(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  }
  async function homeWithDb(): Promise<string> {
    const dir = `home-${dbCount++}`;
    await db(
      [s("s1")],
      [m("s1", "user", "go", 100, undefined, "msg_go"), m("s1", "user", TC, 100, CTX)],
      `${dir}/.local/share/goose/sessions`,
    );
    return path.join(root, dir);
  }
  const env = { PATH: "/usr/bin:/bin" };
  const opts = (goose: string, home = root) => ({ goose, name: "task", env, home, cwd: root });

  it("uses Goose's session list and export when they work", async () => {
    const list = JSON.stringify([
      { id: "s9", name: "task", session_type: "user", message_count: 4, working_dir: "/w" },
    ]);
    const goose = await fakeGoose(
      "goose-ok",
      `case "$2" in list) printf '%s\\n' '${list}';; export) cat <<'EOF'\n${exported([msg("user", "go"), msg("assistant", "ok")], "s9")}\nEOF\n;; esac`,
    );
    const found = { kind: "found", id: "s9", messages: 4, workingDir: "/w", source: "goose session list" };
    expect(await probeSession(opts(goose))).toEqual(found);
    expect(await readConversationTail({ ...opts(goose), expectedId: "s9" })).toEqual({
      kind: "read",
      source: "goose session export",
      tail: tail(2, "assistant", null, "msg_ok"),
    });
  });

  it("falls back to sqlite3 when Goose cannot answer, counting visible messages only", async () => {
    const home = await homeWithDb();
    const goose = await fakeGoose("goose-broken", "echo 'Error: database is locked' >&2; exit 1");
    expect(await probeSession(opts(goose, home))).toMatchObject({ kind: "found", id: "s1", messages: 1 });
    expect(await readConversationTail({ ...opts(goose, home), expectedId: "s1" })).toMatchObject({
      kind: "read",
      tail: tail(1, "user", "go", "msg_go", true),
    });
  });

  it("answers unknown when the export names another session and the database does too", async () => {
    const home = await homeWithDb();
    const goose = await fakeGoose("goose-other", `cat <<'EOF'\n${exported([], "other")}\nEOF`);
    const got = await readConversationTail({ ...opts(goose, home), expectedId: "s2" });
    expect(got.kind).toBe("unknown");
    expect(got.kind === "unknown" && got.reason).toMatch(/returned session other, not s2.*is s1, not s2/);
  });

  it("says absent when there is no database at all, and unknown without sqlite3", async () => {
    const goose = await fakeGoose("goose-fails", "exit 1");
    expect(await probeSession(opts(goose, path.join(root, "empty-home")))).toMatchObject({ kind: "absent" });
    expect(await probeSession({ ...opts(goose, await homeWithDb()), env: { PATH: "/nonexistent" } })).toMatchObject({
      kind: "unknown",
      reason: expect.stringMatching(/exited 1; sqlite3 is not installed/),
    });
  });
});

const listed = (over: Record<string, unknown>) => {
  const base = { id: "20261122_1", name: "task-1", session_type: "user", message_count: 2, working_dir: "/home/coder" };
  return JSON.stringify([{ ...base, updated_at: "2026-11-22T10:00:00Z", ...over }]);
};

describe("findNamedSession", () => {
  it("finds an exact name match with its message count", () => {
    expect(findNamedSession(listed({}), "task-1")).toMatchObject({ kind: "found", id: "20261122_1", messages: 2 });
  });

  it("matches the id too, as goose --resume --name does", () => {
    expect(findNamedSession(listed({ name: "other" }), "20261122_1")).toMatchObject({ kind: "found" });
  });

  it("does not match a name that merely contains the wanted one", () => {
    expect(findNamedSession(listed({ name: "task-10" }), "task-1")).toEqual({
      kind: "absent",
      source: "goose session list",
    });
  });

  it("ignores sessions goose would not resume (sub-agents, hidden)", () => {
    expect(findNamedSession(listed({ session_type: "sub_agent" }), "task-1").kind).toBe("absent");
  });

  it("picks the most recently active of two sessions with the same name, then the highest id", () => {
    const two = (a: object, b: object) =>
      JSON.stringify([
        { name: "t", ...a },
        { name: "t", ...b },
      ]);
    const at = (h: string) => `2026-11-22T${h}:00:00Z`;
    expect(
      findNamedSession(
        two({ id: "a", message_count: 0, updated_at: at("09") }, { id: "b", message_count: 4, updated_at: at("11") }),
        "t",
      ),
    ).toMatchObject({ id: "b", messages: 4 });
    expect(
      findNamedSession(
        two(
          { id: "20261122_1", message_count: 1, updated_at: at("10") },
          { id: "20261122_2", message_count: 2, updated_at: at("10") },
        ),
        "t",
      ),
    ).toMatchObject({ id: "20261122_2" });
  });

  it("reads Goose 1.10-1.11 lists, which name sessions in description", () => {
    const old = { id: "20251010_1", description: "task-1", message_count: 3, updated_at: "x" };
    expect(findNamedSession(JSON.stringify([old]), "task-1")).toMatchObject({ kind: "found", messages: 3 });
  });

  it("treats empty output as no sessions and rejects non-lists", () => {
    expect(findNamedSession("", "task-1").kind).toBe("absent");
    expect(() => findNamedSession('{"error":"x"}', "task-1")).toThrow();
    expect(() => findNamedSession("No sessions found", "task-1")).toThrow();
  });
});

it("gooseSessionsDb follows GOOSE_PATH_ROOT, XDG_DATA_HOME, then the default", () => {
  expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "/g" }, "/h")).toBe("/g/data/sessions/sessions.db");
  expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "relative", XDG_DATA_HOME: "/x" }, "/h")).toBe(
    "/x/goose/sessions/sessions.db",
  );
  expect(gooseSessionsDb({}, "/h")).toBe("/h/.local/share/goose/sessions/sessions.db");
});

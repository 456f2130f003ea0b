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
const VISIBLE = '{"userVisible":true,"agentVisible":true}';
const TURN_CONTEXT = '{"userVisible":false,"agentVisible":true,"turnContext":true}';
const AGENT_ONLY = '{"userVisible":false,"agentVisible":true}';
const text = (t: string) => JSON.stringify([{ type: "text", text: t }]);

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "goose-sessions-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const q = (s: string | null) => (s === null ? "NULL" : `'${s.replace(/'/g, "''")}'`);

/** A database shaped like Goose's schema 15 (crates/goose/src/session/session_manager.rs at v1.46.1), written with the sqlite3 CLI. */
async function buildDb(
  file: string,
  sessions: Array<{ id: string; name?: string; description?: string; type?: string; updated?: string }>,
  messages: Array<{ session: string; role: string; content: string; at: number; meta?: string | null; id?: string }>,
): Promise<void> {
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
        `INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES (${q(m.id ?? `msg_${m.session}_${i}`)}, ${q(m.session)}, ${q(m.role)}, ${q(m.content)}, ${m.at}, ${m.meta === undefined ? q(VISIBLE) : q(m.meta)});`,
    ),
  ].join("\n");
  const result = await run(SQLITE, ["-init", "/dev/null", "-batch", "-bail", file, sql]);
  if (result.code !== 0) throw new Error(`building the test database failed: ${result.stderr}`);
}

let dbCount = 0;
async function db(...args: Parameters<typeof buildDb> extends [string, ...infer R] ? R : never): Promise<string> {
  const file = path.join(root, `db-${dbCount++}`, "sessions.db");
  await mkdir(path.dirname(file));
  await buildDb(file, ...args);
  return file;
}

async function query(file: string, name: string): Promise<SessionRow | null> {
  const found = await querySessionDb(SQLITE, file, name, process.env);
  if ("problem" in found) throw new Error(found.problem);
  return found.row;
}

describe("sessionQuery against a real database", () => {
  it("counts only user-visible messages, as Goose's message_count does", async () => {
    const file = await db(
      [{ id: "20261122_1", name: "task" }],
      [
        { session: "20261122_1", role: "user", content: text("fix it"), at: 100 },
        {
          session: "20261122_1",
          role: "user",
          content: text("<turn-context>t</turn-context>"),
          at: 100,
          meta: TURN_CONTEXT,
        },
        { session: "20261122_1", role: "assistant", content: text("done"), at: 101, id: "msg_reply" },
      ],
    );
    const row = await query(file, "task");
    expect(row).toMatchObject({
      id: "20261122_1",
      visible_messages: 2,
      last_role: "assistant",
      last_message_id: "msg_reply",
      assistant_after: 0,
    });
    expect(tailFromRow(row as SessionRow)).toEqual({
      visibleCount: 2,
      lastVisibleRole: "assistant",
      lastVisibleUserText: null,
      lastVisibleId: "msg_reply",
      unanswered: false,
    });
  });

  it("reports an interrupted turn: the last visible message is the user's, with no reply after it", async () => {
    const file = await db(
      [{ id: "s1", name: "task" }],
      [
        { session: "s1", role: "user", content: text("first"), at: 100 },
        { session: "s1", role: "user", content: text("<turn-context/>"), at: 100, meta: TURN_CONTEXT },
        { session: "s1", role: "assistant", content: text("answer"), at: 101 },
        {
          session: "s1",
          role: "user",
          content: JSON.stringify([
            { type: "text", text: "part one" },
            { type: "image", data: "x" },
            { type: "text", text: "part two" },
          ]),
          at: 200,
          id: "msg_last",
        },
        { session: "s1", role: "user", content: text("<turn-context/>"), at: 200, meta: TURN_CONTEXT },
      ],
    );
    expect(tailFromRow((await query(file, "task")) as SessionRow)).toEqual({
      visibleCount: 3,
      lastVisibleRole: "user",
      lastVisibleUserText: "part one\npart two",
      lastVisibleId: "msg_last",
      unanswered: true,
    });
  });

  it("does not call a turn unanswered when a hidden assistant message followed it", async () => {
    const file = await db(
      [{ id: "s1", name: "task" }],
      [
        { session: "s1", role: "user", content: text("go"), at: 100 },
        { session: "s1", role: "assistant", content: text("summary"), at: 101, meta: AGENT_ONLY },
      ],
    );
    expect(tailFromRow((await query(file, "task")) as SessionRow)).toMatchObject({
      visibleCount: 1,
      lastVisibleRole: "user",
      unanswered: false,
    });
  });

  it("treats rows without metadata (older schemas) as visible", async () => {
    const file = await db(
      [{ id: "s1", name: "task" }],
      [{ session: "s1", role: "user", content: text("hi"), at: 100, meta: null }],
    );
    expect(await query(file, "task")).toMatchObject({ visible_messages: 1, last_role: "user" });
  });

  it("picks the session with the latest message, not the latest updated_at", async () => {
    const file = await db(
      [
        { id: "a", name: "task", updated: "2026-11-22 12:00:00" },
        { id: "b", name: "task", updated: "2026-01-01 00:00:00" },
      ],
      [
        { session: "a", role: "user", content: text("a"), at: 1_700_000_000 },
        { session: "b", role: "user", content: text("b"), at: 1_800_000_000 },
      ],
    );
    expect((await query(file, "task"))?.id).toBe("b");
  });

  it("reads millisecond timestamps as Goose does", async () => {
    const file = await db(
      [
        { id: "seconds", name: "task" },
        { id: "millis", name: "task" },
      ],
      [
        { session: "seconds", role: "user", content: text("s"), at: 1_800_000_000 },
        { session: "millis", role: "user", content: text("m"), at: 1_700_000_000_000 },
      ],
    );
    expect((await query(file, "task"))?.id).toBe("seconds");
  });

  it("falls back to updated_at for a session without messages, then to the highest id", async () => {
    const file = await db(
      [
        { id: "old", name: "task", updated: "2020-01-01 00:00:00" },
        { id: "empty-new", name: "task", updated: "2026-11-22 10:00:00" },
        { id: "tie-a", name: "tie", updated: "2026-11-22 10:00:00" },
        { id: "tie-b", name: "tie", updated: "2026-11-22 10:00:00" },
      ],
      [{ session: "old", role: "user", content: text("x"), at: 1_600_000_000 }],
    );
    expect(await query(file, "task")).toMatchObject({
      id: "empty-new",
      visible_messages: 0,
      last_role: null,
      assistant_after: 0,
    });
    expect((await query(file, "tie"))?.id).toBe("tie-b");
  });

  it("matches name or id exactly, the old description for unnamed rows, and only user and scheduled sessions", async () => {
    const file = await db(
      [
        { id: "20261122_1", name: "task-10" },
        { id: "20261122_2", name: "", description: "legacy" },
        { id: "20261122_3", name: "sub", type: "sub_agent" },
        { id: "20261122_4", name: "sched", type: "scheduled" },
        { id: "20261122_5", name: "x' OR 1=1; --" },
      ],
      [],
    );
    expect(await query(file, "task-1")).toBeNull();
    expect((await query(file, "20261122_1"))?.id).toBe("20261122_1");
    expect((await query(file, "legacy"))?.id).toBe("20261122_2");
    expect(await query(file, "sub")).toBeNull();
    expect((await query(file, "sched"))?.id).toBe("20261122_4");
    expect((await query(file, "x' OR 1=1; --"))?.id).toBe("20261122_5");
    expect(await query(file, "x")).toBeNull();
  });

  it("opens a database whose path needs escaping in a URI", async () => {
    const file = path.join(root, "we?ird #dir %20", "sessions.db");
    await mkdir(path.dirname(file));
    await buildDb(file, [{ id: "s1", name: "task" }], []);
    expect((await query(file, "task"))?.id).toBe("s1");
  });

  it("carries the name as hex, so quotes cannot end the SQL string", () => {
    const sql = sessionQuery("x' OR 1=1; --");
    expect(sql).not.toContain("1=1");
    expect(sql).toContain(Buffer.from("x' OR 1=1; --").toString("hex"));
  });
});

const exported = (conversation: unknown, id: unknown = "20261122_1") =>
  JSON.stringify({ id, name: "task", message_count: 0, conversation }, null, 2);
const msg = (
  role: string,
  t: string | null,
  meta: unknown = { userVisible: true, agentVisible: true },
  id: string | null = `msg_${t}`,
) => ({
  id,
  role,
  created: 1_800_000_000,
  content: t === null ? [{ type: "toolResponse", id: "t1" }] : [{ type: "text", text: t }],
  metadata: meta,
});

describe("parseSessionExport", () => {
  it.each([
    {
      name: "answered turn",
      conversation: [
        msg("user", "fix"),
        msg("user", "<turn-context/>", { userVisible: false, agentVisible: true, turnContext: true }),
        msg("assistant", "done"),
      ],
      tail: {
        visibleCount: 2,
        lastVisibleRole: "assistant",
        lastVisibleUserText: null,
        lastVisibleId: "msg_done",
        unanswered: false,
      },
    },
    {
      name: "interrupted turn behind a hidden turn-context row",
      conversation: [
        msg("user", "fix"),
        msg("assistant", "done"),
        msg("user", "again"),
        msg("user", "<turn-context/>", { userVisible: false, agentVisible: true, turnContext: true }),
      ],
      tail: {
        visibleCount: 3,
        lastVisibleRole: "user",
        lastVisibleUserText: "again",
        lastVisibleId: "msg_again",
        unanswered: true,
      },
    },
    {
      name: "hidden assistant message after the last visible user message",
      conversation: [msg("user", "go"), msg("assistant", "summary", { userVisible: false, agentVisible: true })],
      tail: {
        visibleCount: 1,
        lastVisibleRole: "user",
        lastVisibleUserText: "go",
        lastVisibleId: "msg_go",
        unanswered: false,
      },
    },
    {
      name: "a tool result as the last visible message",
      conversation: [msg("user", "go"), msg("assistant", "calling"), msg("user", null, undefined, null)],
      tail: {
        visibleCount: 3,
        lastVisibleRole: "user",
        lastVisibleUserText: "",
        lastVisibleId: null,
        unanswered: true,
      },
    },
    {
      name: "messages without metadata are visible",
      conversation: [
        {
          id: "m1",
          role: "user",
          created: 1,
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        },
      ],
      tail: {
        visibleCount: 1,
        lastVisibleRole: "user",
        lastVisibleUserText: "a\nb",
        lastVisibleId: "m1",
        unanswered: true,
      },
    },
    {
      name: "empty conversation",
      conversation: [],
      tail: {
        visibleCount: 0,
        lastVisibleRole: null,
        lastVisibleUserText: null,
        lastVisibleId: null,
        unanswered: false,
      },
    },
    {
      name: "null conversation",
      conversation: null,
      tail: {
        visibleCount: 0,
        lastVisibleRole: null,
        lastVisibleUserText: null,
        lastVisibleId: null,
        unanswered: false,
      },
    },
  ])("$name", ({ conversation, tail }) => {
    expect(parseSessionExport(exported(conversation))).toEqual({ id: "20261122_1", tail });
  });

  it.each([
    ["not JSON", "Session exported to x"],
    ["a list", "[]"],
    ["a conversation that is not a list", JSON.stringify({ id: "x", conversation: { messages: [] } })],
  ])("rejects %s", (_name, out) => {
    expect(() => parseSessionExport(out)).toThrow();
  });
});

describe("findNamedSession", () => {
  it("breaks a tie in activity by the highest id, as Goose does", () => {
    const list = [
      { id: "20261122_1", name: "t", updated_at: "2026-11-22T10:00:00Z", message_count: 1 },
      { id: "20261122_2", name: "t", updated_at: "2026-11-22T10:00:00Z", message_count: 2 },
    ];
    expect(findNamedSession(JSON.stringify(list), "t")).toMatchObject({ id: "20261122_2" });
  });
});

describe("sqliteReadOnlyUri", () => {
  it.each([
    ["/h/.local/share/goose/sessions/sessions.db", "file:/h/.local/share/goose/sessions/sessions.db?mode=ro"],
    ["/a?b/c#d/e%f g/x.db", "file:/a%3Fb/c%23d/e%25f%20g/x.db?mode=ro"],
  ])("%s", (file, uri) => expect(sqliteReadOnlyUri(file)).toBe(uri));
});

const result = (over: Partial<RunResult>): RunResult => ({
  code: 0,
  signal: null,
  stdout: "",
  stderr: "",
  timedOut: false,
  truncated: false,
  ...over,
});

describe("describeFailure", () => {
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
  ])("%j", (r, line) => expect(describeFailure("x", r, 2000)).toBe(line));
});

describe("probeSession and readConversationTail with real processes", () => {
  async function fakeGoose(name: string, body: string): Promise<string> {
    const file = path.join(root, name);
    await writeFile(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  }

  async function homeWithDb(): Promise<string> {
    const home = path.join(root, `home-${dbCount++}`);
    const file = path.join(home, ".local", "share", "goose", "sessions", "sessions.db");
    await mkdir(path.dirname(file), { recursive: true });
    await buildDb(
      file,
      [{ id: "s1", name: "task" }],
      [
        { session: "s1", role: "user", content: text("go"), at: 100, id: "msg_go" },
        { session: "s1", role: "user", content: text("<turn-context/>"), at: 100, meta: TURN_CONTEXT },
      ],
    );
    return home;
  }

  const env = { PATH: "/usr/bin:/bin" };

  it("uses Goose's session list and export when they work", async () => {
    const list = JSON.stringify([
      { id: "s9", name: "task", session_type: "user", message_count: 4, working_dir: "/w" },
    ]);
    const goose = await fakeGoose(
      "goose-ok",
      `case "$2" in list) printf '%s\\n' '${list}';; export) cat <<'EOF'\n${exported([msg("user", "go"), msg("assistant", "ok")], "s9")}\nEOF\n;; esac`,
    );
    expect(await probeSession({ goose, name: "task", env, home: root, cwd: root })).toEqual({
      kind: "found",
      id: "s9",
      messages: 4,
      workingDir: "/w",
      source: "goose session list",
    });
    const tail = await readConversationTail({ goose, name: "task", env, home: root, cwd: root, expectedId: "s9" });
    expect(tail).toEqual({
      kind: "read",
      source: "goose session export",
      tail: {
        visibleCount: 2,
        lastVisibleRole: "assistant",
        lastVisibleUserText: null,
        lastVisibleId: "msg_ok",
        unanswered: false,
      },
    });
  });

  it("falls back to sqlite3 when Goose cannot answer, counting visible messages only", async () => {
    const home = await homeWithDb();
    const goose = await fakeGoose("goose-broken", "echo 'Error: database is locked' >&2; exit 1");
    const probe = await probeSession({ goose, name: "task", env, home, cwd: root });
    expect(probe).toMatchObject({ kind: "found", id: "s1", messages: 1 });
    const tail = await readConversationTail({ goose, name: "task", env, home, cwd: root, expectedId: "s1" });
    expect(tail).toMatchObject({
      kind: "read",
      tail: {
        visibleCount: 1,
        lastVisibleRole: "user",
        lastVisibleUserText: "go",
        lastVisibleId: "msg_go",
        unanswered: true,
      },
    });
  });

  it("answers unknown when the export names another session and the database does too", async () => {
    const home = await homeWithDb();
    const goose = await fakeGoose("goose-other", `cat <<'EOF'\n${exported([], "other")}\nEOF`);
    const tail = await readConversationTail({ goose, name: "task", env, home, cwd: root, expectedId: "s2" });
    expect(tail.kind).toBe("unknown");
    expect(tail.kind === "unknown" && tail.reason).toMatch(/returned session other, not s2.*is s1, not s2/);
  });

  it("says absent when there is no database at all, and unknown without sqlite3", async () => {
    const goose = await fakeGoose("goose-fails", "exit 1");
    expect(
      await probeSession({ goose, name: "task", env, home: path.join(root, "empty-home"), cwd: root }),
    ).toMatchObject({ kind: "absent" });
    const home = await homeWithDb();
    expect(await probeSession({ goose, name: "task", env: { PATH: "/nonexistent" }, home, cwd: root })).toMatchObject({
      kind: "unknown",
      reason: expect.stringMatching(/exited 1; sqlite3 is not installed/),
    });
  });
});

const session = (over: Record<string, unknown>) => ({
  id: "20261122_1",
  name: "task-1",
  session_type: "user",
  message_count: 2,
  working_dir: "/home/coder",
  updated_at: "2026-11-22T10:00:00Z",
  ...over,
});

describe("findNamedSession", () => {
  it("finds an exact name match with its message count", () => {
    expect(findNamedSession(JSON.stringify([session({})]), "task-1")).toMatchObject({
      kind: "found",
      id: "20261122_1",
      messages: 2,
    });
  });

  it("matches the id too, as goose --resume --name does", () => {
    expect(findNamedSession(JSON.stringify([session({ name: "other" })]), "20261122_1")).toMatchObject({
      kind: "found",
    });
  });

  it("does not match a name that merely contains the wanted one", () => {
    expect(findNamedSession(JSON.stringify([session({ name: "task-10" })]), "task-1")).toEqual({
      kind: "absent",
      source: "goose session list",
    });
  });

  it("ignores sessions goose would not resume (sub-agents, hidden)", () => {
    expect(findNamedSession(JSON.stringify([session({ session_type: "sub_agent" })]), "task-1").kind).toBe("absent");
  });

  it("picks the most recently active of two sessions with the same name", () => {
    const list = [
      session({ id: "a", message_count: 0, updated_at: "2026-11-22T09:00:00Z" }),
      session({ id: "b", message_count: 4, updated_at: "2026-11-22T11:00:00Z" }),
    ];
    expect(findNamedSession(JSON.stringify(list), "task-1")).toMatchObject({ id: "b", messages: 4 });
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

describe("gooseSessionsDb", () => {
  it("follows GOOSE_PATH_ROOT, XDG_DATA_HOME, then the default", () => {
    expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "/g" }, "/h")).toBe("/g/data/sessions/sessions.db");
    expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "relative", XDG_DATA_HOME: "/x" }, "/h")).toBe(
      "/x/goose/sessions/sessions.db",
    );
    expect(gooseSessionsDb({}, "/h")).toBe("/h/.local/share/goose/sessions/sessions.db");
  });
});

describe("sessionQuery", () => {
  it("carries the name as hex, so quotes cannot end the SQL string", () => {
    const sql = sessionQuery("x' OR 1=1; --");
    expect(sql).not.toContain("OR 1=1");
    expect(sql).toContain(Buffer.from("x' OR 1=1; --").toString("hex"));
  });
});

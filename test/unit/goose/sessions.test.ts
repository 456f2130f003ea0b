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
import type { RunResult } from "../../../src/lib/exec.js";
import { AGENT_ONLY, buildSessionsDb, CTX, exported, m, msg, SQLITE, s, TC, tail } from "./session-store.js";

const NO_TAIL = tail(0, null, null, null);

let root: string;
let file: string;
const [AT, OLD, NEW] = ["2026-11-22 10:00:00", "2020-01-01 00:00:00", "2026-11-22 12:00:00"];
const parts = JSON.stringify([
  { type: "text", text: "part one" },
  { type: "image", data: "x" },
  { type: "text", text: "part two" },
]);
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "goose-sessions-test-"));
  // One database; each case below owns the sessions of its name.
  file = path.join(root, "sessions.db");
  await buildSessionsDb(
    file,
    [
      ...[s("c1", "counted"), s("i1", "interrupted"), s("h1", "hidden"), s("o1", "old-schema")],
      ...[s("a", "latest", NEW), s("b", "latest", OLD), s("seconds", "units"), s("millis", "units")],
      ...[s("old", "fallback", OLD), s("empty-new", "fallback", AT), s("tie-a", "tie", AT), s("tie-b", "tie", AT)],
      ...[s("20261122_1", "task-10"), s("20261122_2", "", undefined, { description: "legacy" })],
      ...[
        s("20261122_3", "sub", undefined, { type: "sub_agent" }),
        s("20261122_4", "sched", undefined, { type: "scheduled" }),
      ],
      s("20261122_5", "x' OR 1=1; --"),
    ],
    [
      ...[
        m("c1", "user", "fix it", 100),
        m("c1", "user", TC, 100, CTX),
        m("c1", "assistant", "done", 101, undefined, "msg_reply"),
      ],
      ...[m("i1", "user", "first", 100), m("i1", "user", TC, 100, CTX), m("i1", "assistant", "answer", 101)],
      ...[m("i1", "user", parts, 200, undefined, "msg_last"), m("i1", "user", TC, 200, CTX)],
      ...[
        m("h1", "user", "go", 100),
        m("h1", "assistant", "summary", 101, AGENT_ONLY),
        m("o1", "user", "hi", 100, null),
      ],
      ...[m("a", "user", "a", 1_700_000_000), m("b", "user", "b", 1_800_000_000), m("old", "user", "x", 1_600_000_000)],
      ...[m("seconds", "user", "s", 1_800_000_000), m("millis", "user", "m", 1_700_000_000_000)],
    ],
  );
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function query(name: string, db = file): Promise<SessionRow | null> {
  const found = await querySessionDb(SQLITE, db, name, process.env);
  if ("problem" in found) throw new Error(found.problem);
  return found.row;
}
const queryTail = async (name: string) => tailFromRow((await query(name)) as SessionRow);

describe("sessionQuery against a real database", () => {
  it("counts only user-visible messages, as Goose's message_count does", async () => {
    const row = await query("counted");
    const want = { visible_messages: 2, last_role: "assistant", last_message_id: "msg_reply", assistant_after: 0 };
    expect(row).toMatchObject({ id: "c1", ...want });
    expect(tailFromRow(row as SessionRow)).toEqual(tail(2, "assistant", null, "msg_reply"));
  });

  it("reports an interrupted turn: the last visible user message has no reply after it", async () => {
    expect(await queryTail("interrupted")).toEqual(tail(3, "user", "part one\npart two", "msg_last", true));
  });

  it("a hidden assistant message after the last user message answers the turn", async () => {
    expect(await queryTail("hidden")).toMatchObject({ visibleCount: 1, lastVisibleRole: "user", unanswered: false });
  });

  it("treats rows without metadata (older schemas) as visible", async () => {
    expect(await query("old-schema")).toMatchObject({ visible_messages: 1, last_role: "user" });
  });

  it.each([
    ["the session with the latest message, not the latest updated_at", "latest", "b"],
    ["by millisecond timestamps read as Goose does", "units", "seconds"],
    ["by updated_at for a session without messages", "fallback", "empty-new"],
    ["the highest id on a tie", "tie", "tie-b"],
  ])("picks %s", async (_, name, id) => {
    expect((await query(name))?.id).toBe(id);
  });

  it("a session without messages has none visible, no last role, nothing after", async () => {
    const want = { id: "empty-new", visible_messages: 0, last_role: null, assistant_after: 0 };
    expect(await query("fallback")).toMatchObject(want);
  });

  it.each([
    ["task-1", undefined],
    ["20261122_1", "20261122_1"],
    ["legacy", "20261122_2"],
    ["sub", undefined],
    ["sched", "20261122_4"],
    ["x' OR 1=1; --", "20261122_5"],
    ["x", undefined],
  ])("name or id exactly, old description if unnamed, user and scheduled sessions only: %j -> %s", async (name, id) => {
    expect((await query(name))?.id).toBe(id);
  });

  it("opens a database whose path needs escaping in a URI", async () => {
    const weird = path.join(root, "we?ird #dir %20", "sessions.db");
    await mkdir(path.dirname(weird));
    await buildSessionsDb(weird, [s("s1")], []);
    expect((await query("task", weird))?.id).toBe("s1");
  });

  it("carries the name as hex, so quotes cannot end the SQL string", () => {
    const sql = sessionQuery("x' OR 1=1; --");
    expect(sql).not.toContain("1=1");
    expect(sql).toContain(Buffer.from("x' OR 1=1; --").toString("hex"));
  });
});

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
  let homes = 0;
  async function homeWithDb(): Promise<string> {
    const home = path.join(root, `home-${homes++}`);
    const db = path.join(home, ".local/share/goose/sessions/sessions.db");
    await mkdir(path.dirname(db), { recursive: true });
    await buildSessionsDb(
      db,
      [s("s1")],
      [m("s1", "user", "go", 100, undefined, "msg_go"), m("s1", "user", TC, 100, CTX)],
    );
    return home;
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
    const row = (id: string, count: number, h: string) => ({
      id,
      name: "t",
      message_count: count,
      updated_at: `2026-11-22T${h}:00:00Z`,
    });
    const pick = (...rows: object[]) => findNamedSession(JSON.stringify(rows), "t");
    expect(pick(row("a", 0, "09"), row("b", 4, "11"))).toMatchObject({ id: "b", messages: 4 });
    expect(pick(row("20261122_1", 1, "10"), row("20261122_2", 2, "10"))).toMatchObject({ id: "20261122_2" });
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

import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  describeNamesakes,
  findNamedSession,
  parseSessionExport,
  type SessionProbe,
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
  readSession,
} from "../../../src/goose/sessions.js";
import type { RunResult } from "../../../src/lib/exec.js";
import { scratchDir } from "../scratch.js";
import {
  AGENT_ONLY,
  buildSessionsDb,
  CTX,
  exported,
  m,
  msg,
  SQLITE,
  s,
  TC,
  tail,
  USER_ONLY,
  VISIBLE,
} from "./session-store.js";

const NO_TAIL = tail(0, null, null, null);
const at = scratchDir("goose-sessions-test");
const [AT, OLD, NEW] = ["2026-11-22 10:00:00", "2020-01-01 00:00:00", "2026-11-22 12:00:00"];
const parts = JSON.stringify([
  { type: "text", text: "part one" },
  { type: "image", data: "x" },
  { type: "text", text: "part two" },
]);
/**
 * Conversations that end in a failed model call, as Goose 1.47.0 stores one:
 * an assistant message whose content is an error (`kind` and `message`),
 * shown to the user and never sent to the model (Message::from_provider_error
 * and ErrorContent in crates/goose-provider-types/src/conversation/message.rs,
 * aaif-goose/goose v1.47.0). Each is read both ways, from the database and
 * from the export, with one expected tail.
 */
type Stored = [role: string, content: unknown[], metadata?: object];
const said = (text: string) => [{ type: "text", text }];
const refused = (kind: string) => [
  {
    type: "error",
    kind,
    message:
      "Ran into this error: Authentication error: Authentication failed for http://127.0.0.1:1/api/v2/aibridge/openai/v1/chat/completions. Status: 401 Unauthorized. Response: invalid token.\n\nPlease retry if you think this is a transient or recoverable error.",
  },
];
const TOOL_CALL = [{ type: "toolRequest", id: "call_1", toolCall: { status: "success", value: { name: "shell" } } }];
const TOOL_RESULT = [{ type: "toolResponse", id: "call_1", toolResult: { status: "success", value: {} } }];
const failed = (kind: string, userText: string, firstMessage: boolean) => ({ kind, userText, firstMessage });
const FAILED_TURNS: Array<[string, string, Stored[], ReturnType<typeof tail>]> = [
  [
    "the first prompt, refused",
    "err-first",
    [
      ["user", said("Fix the login test.")],
      ["user", said(TC), CTX],
      ["assistant", refused("authentication"), USER_ONLY],
    ],
    tail(2, "assistant", null, "err-first-2", false, failed("authentication", "Fix the login test.", true)),
  ],
  [
    "a typed message, refused",
    "err-typed",
    [
      ["user", said("Fix the login test.")],
      ["assistant", said("Fixed.")],
      ["user", said("Now the docs.")],
      ["user", said(TC), CTX],
      ["assistant", refused("other"), USER_ONLY],
    ],
    tail(4, "assistant", null, "err-typed-4", false, failed("other", "Now the docs.", false)),
  ],
  [
    // The turn's own message is the prompt, not the tool result; a hidden row before it is no message the user saw.
    "the first prompt's turn, refused after a tool call",
    "err-tool",
    [
      ["user", said(TC), CTX],
      ["user", said("Fix the login test.")],
      ["assistant", TOOL_CALL],
      ["user", TOOL_RESULT],
      ["assistant", refused("creditsExhausted"), USER_ONLY],
    ],
    tail(4, "assistant", null, "err-tool-4", false, failed("creditsExhausted", "Fix the login test.", true)),
  ],
  [
    // Goose's own rule: a message holding an error ends no turn, whatever else it holds (ends_turn, operation.rs).
    "two failures, the last with some text",
    "err-twice",
    [
      ["user", said("Fix the login test.")],
      ["assistant", refused("other"), USER_ONLY],
      ["assistant", [...said("partial"), ...refused("contextLengthExceeded")], USER_ONLY],
    ],
    tail(3, "assistant", null, "err-twice-2", false, failed("contextLengthExceeded", "Fix the login test.", true)),
  ],
  [
    "a failure, then the next message answered",
    "err-answered",
    [
      ["user", said("Fix the login test.")],
      ["assistant", refused("authentication"), USER_ONLY],
      ["user", said("carry on")],
      ["assistant", said("Fixed.")],
    ],
    tail(4, "assistant", null, "err-answered-3"),
  ],
  [
    "a failure, then a reply the chat does not show",
    "err-hidden",
    [
      ["user", said("Fix the login test.")],
      ["assistant", refused("authentication"), USER_ONLY],
      ["assistant", said("summary"), AGENT_ONLY],
    ],
    tail(2, "assistant", null, "err-hidden-1"),
  ],
  [
    "the continuation refused again",
    "err-again",
    [
      ["user", said("Fix the login test.")],
      ["assistant", refused("authentication"), USER_ONLY],
      ["user", said("carry on")],
      ["assistant", refused("authentication"), USER_ONLY],
    ],
    tail(4, "assistant", null, "err-again-3", false, failed("authentication", "carry on", false)),
  ],
];

// One database; each case below owns the sessions of its name.
beforeAll(async () => {
  await buildSessionsDb(
    at("sessions.db"),
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
      ...[s("bang1", "bang"), s("tool1", "tool"), s("bangmodel1", "bangmodel")],
      ...FAILED_TURNS.map(([, session]) => s(session, session)),
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
      ...BANG_ROWS("bang", "bang_shell_01a21ca1-17e1-7772-a33e-09bf333b724d"),
      // A tool result of the model's own call, the turn cut off before its answer: interrupted.
      ...BANG_ROWS("tool", "call_abc123", "fix the build"),
      // A `!` message Goose sent to the model (upstream after 1.47.0 without GOOSE_STATE_MACHINE,
      // read from source), stopped before its answer: a turn like any other, interrupted.
      ...[m("bangmodel1", "user", "!echo hi", 300, undefined, "msg_bang"), m("bangmodel1", "user", TC, 300, CTX)],
      ...[m("a", "user", "a", 1_700_000_000), m("b", "user", "b", 1_800_000_000), m("old", "user", "x", 1_600_000_000)],
      ...[m("seconds", "user", "s", 1_800_000_000), m("millis", "user", "m", 1_700_000_000_000)],
      ...FAILED_TURNS.flatMap(([, session, stored]) =>
        stored.map(([role, content, meta], j) =>
          m(session, role, JSON.stringify(content), 400 + j, meta, `${session}-${j}`),
        ),
      ),
    ],
  );
});
/**
 * A turn whose last row is a tool's result, as Goose 1.46.1 stored a `!COMMAND`
 * message (observed 2026-11-27: the text, the shell call, its result, all
 * visible, no turn-context row), with the call's id; `text` without a `!` and
 * another id stands for a model's tool call cut off before its answer.
 */
function BANG_ROWS(session: string, callId: string, text = "!echo hello from a bang") {
  const call = { name: "shell", arguments: { command: text.slice(1) } };
  const result = { resultType: "complete", content: [{ type: "text", text: "hello from a bang" }], isError: false };
  return [
    m(`${session}1`, "user", text, 300),
    m(
      `${session}1`,
      "assistant",
      JSON.stringify([{ type: "toolRequest", id: callId, toolCall: { status: "success", value: call } }]),
      300,
    ),
    m(
      `${session}1`,
      "user",
      JSON.stringify([{ type: "toolResponse", id: callId, toolResult: { status: "success", value: result } }]),
      300,
      undefined,
      "msg_result",
    ),
  ];
}

async function query(name: string, db = at("sessions.db")): Promise<SessionRow | null> {
  const found = await querySessionDb(SQLITE, db, name, process.env);
  if ("problem" in found) throw new Error(found.problem);
  return found.row;
}
const EMPTY = { visible_messages: 0, last_role: null, assistant_after: 0 };

describe("sessionQuery against a real database", () => {
  const [counted, answered] = [{ visible_messages: 2, last_role: "assistant" }, { unanswered: false }];
  it.each([
    // Only user-visible messages count, as Goose's message_count does.
    [
      "counted",
      { ...counted, last_message_id: "msg_reply", assistant_after: 0 },
      tail(2, "assistant", null, "msg_reply"),
    ],
    // The last visible user message has no reply after it: an interrupted turn.
    ["interrupted", {}, tail(3, "user", "part one\npart two", "msg_last", true)],
    // A hidden assistant message after the last user message answers the turn.
    ["hidden", {}, expect.objectContaining({ visibleCount: 1, lastVisibleRole: "user", ...answered })],
    // A `!` command's turn ends with its tool result: answered, no model to wait for.
    ["bang", { visible_messages: 3, last_role: "user", last_text: null }, tail(3, "user", "", "msg_result")],
    ["tool", { visible_messages: 3, last_role: "user" }, tail(3, "user", "", "msg_result", true)],
    ["bangmodel", { visible_messages: 1, last_role: "user" }, tail(1, "user", "!echo hi", "msg_bang", true)],
    // Rows without metadata (older schemas) are visible.
    ["old-schema", { visible_messages: 1, last_role: "user" }, expect.anything()],
  ])("reads session %s", async (name, row, want) => {
    const got = await query(name);
    expect(got).toMatchObject(row);
    expect(tailFromRow(got as SessionRow)).toEqual(want);
  });

  it.each([
    ["the session with the latest message, not the latest updated_at", "latest", { id: "b" }],
    ["by millisecond timestamps read as Goose does", "units", { id: "seconds" }],
    // A session without messages has none visible, no last role, nothing after.
    ["by updated_at for a session without messages", "fallback", { id: "empty-new", ...EMPTY }],
    ["the highest id on a tie", "tie", { id: "tie-b" }],
  ])("picks %s", async (_, name, want) => {
    expect(await query(name)).toMatchObject(want);
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
    const weird = at("we?ird #dir %20", "sessions.db");
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

// The id, name and conversation that `goose session export --name bang3 --format json` of
// Goose 1.46.1 printed (2026-11-27) after `!echo hello from a bang; …` was typed into
// `goose session`.
const BANG_EXPORT = JSON.parse(await readFile(new URL("./bang-export.json", import.meta.url), "utf8"));
const BANG_ID = "bang_shell_01a21ca1-17e1-7772-a33e-09bf333b724d";
const BANG_LAST = "msg_7b2d3ada-1d4a-49b0-9844-a5b98b210fff";

const noMeta = { id: "m1", role: "user", created: 1, content: ["a", "b"].map((text) => ({ type: "text", text })) };

describe("parseSessionExport", () => {
  const [fix, ctx, done, go] = [msg("user", "fix"), msg("user", TC, CTX), msg("assistant", "done"), msg("user", "go")];
  const [again, hidden, tool] = [
    msg("user", "again"),
    msg("assistant", "s", AGENT_ONLY),
    msg("user", null, undefined, null),
  ];
  it.each([
    ["answered turn", [fix, ctx, done], tail(2, "assistant", null, "msg_done")],
    [
      "interrupted turn behind a hidden turn-context row",
      [fix, done, again, ctx],
      tail(3, "user", "again", "msg_again", true),
    ],
    ["hidden assistant message after the last visible user one", [go, hidden], tail(1, "user", "go", "msg_go")],
    [
      "a tool result as the last visible message",
      [go, msg("assistant", "calling"), tool],
      tail(3, "user", "", null, true),
    ],
    ["a `!` command's turn, as Goose 1.46.1 exported it", BANG_EXPORT.conversation, tail(3, "user", "", BANG_LAST)],
    [
      "a model's tool call cut off before its answer",
      BANG_EXPORT.conversation.map((message: unknown) =>
        JSON.parse(JSON.stringify(message).replaceAll(BANG_ID, "call_abc123")),
      ),
      tail(3, "user", "", BANG_LAST, true),
    ],
    ["messages without metadata are visible", [noMeta], tail(1, "user", "a\nb", "m1", true)],
    ["empty conversation", [], NO_TAIL],
    ["null conversation", null, NO_TAIL],
  ])("%s", (_name, conversation, want) => {
    expect(parseSessionExport(exported(conversation))).toEqual({ id: "20261122_1", workingDir: null, tail: want });
  });

  it.each([
    ["not JSON", "Session exported to x"],
    ["a list", "[]"],
    ["a conversation that is not a list", JSON.stringify({ id: "x", conversation: { messages: [] } })],
  ])("rejects %s", (_name, out) => {
    expect(() => parseSessionExport(out)).toThrow();
  });
});

describe("a turn that ended in a model error: the export and the sqlite3 row agree", () => {
  it.each(FAILED_TURNS)("%s", async (_name, session, stored, want) => {
    const conversation = stored.map(([role, content, metadata], j) => {
      return { id: `${session}-${j}`, role, created: 1_800_000_000, content, metadata: metadata ?? VISIBLE };
    });
    expect(parseSessionExport(exported(conversation)).tail).toEqual(want);
    expect(tailFromRow((await query(session)) as SessionRow)).toEqual(want);
  });
});

it.each([
  ["/h/.local/share/goose/sessions/sessions.db", "file:/h/.local/share/goose/sessions/sessions.db?mode=ro"],
  ["/a?b/c#d/e%f g/x.db", "file:/a%3Fb/c%23d/e%25f%20g/x.db?mode=ro"],
])("sqliteReadOnlyUri %s", (file, uri) => expect(sqliteReadOnlyUri(file)).toBe(uri));

const result = (over: Partial<RunResult>): RunResult => ({
  ...{ code: 0, signal: null, stdout: "", stderr: "", timedOut: false, truncated: false },
  ...over,
});

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
    await writeFile(at(name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return at(name);
  }
  let homes = 0;
  async function homeWithDb(): Promise<string> {
    const home = at(`home-${homes++}`);
    const db = path.join(home, ".local/share/goose/sessions/sessions.db");
    await mkdir(path.dirname(db), { recursive: true });
    const rows = [m("s1", "user", "go", 100, undefined, "msg_go"), m("s1", "user", TC, 100, CTX)];
    await buildSessionsDb(db, [s("s1")], rows);
    return home;
  }
  const env = { PATH: "/usr/bin:/bin" };
  const opts = (goose: string, home = at()) => ({ goose, name: "task", env, home, cwd: at() });

  it("uses Goose's session list and export when they work", async () => {
    const list = JSON.stringify([
      { id: "s9", name: "task", session_type: "user", message_count: 4, working_dir: "/w" },
    ]);
    const out = exported([msg("user", "go"), msg("assistant", "ok")], "s9");
    const goose = await fakeGoose(
      "ok",
      `case "$2" in list) echo '${list}';; export) cat <<'EOF'\n${out}\nEOF\n;; esac`,
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

  it("answers unknown when the export returns another session and the database has no such id", async () => {
    const home = await homeWithDb();
    const goose = await fakeGoose("goose-other", `cat <<'EOF'\n${exported([], "other")}\nEOF`);
    const reason = expect.stringMatching(/returned session other, not s2.*no session "s2" in /);
    expect(await readConversationTail({ ...opts(goose, home), expectedId: "s2" })).toEqual({ kind: "unknown", reason });
  });

  it("says absent when there is no database at all, and unknown without sqlite3", async () => {
    const goose = await fakeGoose("goose-fails", "exit 1");
    expect(await probeSession(opts(goose, at("empty-home")))).toMatchObject({ kind: "absent" });
    expect(await probeSession({ ...opts(goose, await homeWithDb()), env: { PATH: "/nonexistent" } })).toMatchObject({
      kind: "unknown",
      reason: expect.stringMatching(/exited 1; sqlite3 is not installed/),
    });
  });
});

describe("readSession: which Goose processes answer", () => {
  // Logs each call's subcommand (an export with how it names the session); `export --name`
  // prints $EXPORT, or fails as Goose does for a missing name; `export --session-id` prints $EXPORT_BY_ID.
  const body = [
    `case "$2" in export) echo "$2 $3" >> "$CALLS";; *) echo "$2" >> "$CALLS";; esac`,
    `[ "$2 $3" = "export --session-id" ] && printf '%s' "$EXPORT_BY_ID" && exit 0`,
    `case "$2" in list) echo "$LIST";; export) [ -n "$EXPORT" ] && printf '%s' "$EXPORT" && exit 0`,
    `  echo "Error: No session found with name 'task'" >&2; exit 1;; esac`,
  ].join("\n");
  const listed = [{ id: "s1", name: "task", session_type: "user", message_count: 1, working_dir: "/l" }];
  const exported = { id: "s9", working_dir: "/x", conversation: [msg("user", "go")] };
  const emptyExport = { id: "e1", working_dir: "/x", conversation: [] };
  const listEntry = (id: string, messages: number, at: string) => {
    return { id, name: "task", session_type: "user", message_count: messages, working_dir: "/l", updated_at: at };
  };
  // An empty "task" made after the conversation in c1: Goose's resume by name takes e1.
  const namesakes = [listEntry("e1", 0, "2026-11-22T12:00:00Z"), listEntry("c1", 1, "2026-11-22T10:00:00Z")];
  const byId = { id: "c1", working_dir: "/l", conversation: [msg("user", "go")] };
  const found = (id: string, source: string, workingDir: string) => ({
    kind: "found",
    id,
    messages: 1,
    workingDir,
    source,
  });
  let n = 0;
  const E = "export --name";
  it.each([
    [
      "a database, the export answers with a conversation: the export alone",
      true,
      [],
      exported,
      [E],
      found("s9", "goose session export", "/x"),
      1,
    ],
    ["a database, no such session: the export, then the list", true, [], null, [E, "list"], { kind: "absent" }, 0],
    [
      "a database, the export fails, the list finds it: the tail from sqlite3",
      true,
      listed,
      null,
      [E, "list"],
      found("s1", "goose session list", "/l"),
      1,
    ],
    [
      "no database, but the module launched Goose here before: the list alone",
      false,
      [],
      null,
      ["list"],
      { kind: "absent" },
      0,
    ],
    [
      "the export's session is empty and the only one of its name: the list, the export's tail",
      true,
      [listEntry("e1", 0, "2026-11-22T12:00:00Z")],
      emptyExport,
      [E, "list"],
      { kind: "found", id: "e1", messages: 0, source: "goose session list" },
      0,
    ],
    [
      "the export's session is an empty namesake: the list picks the conversation, its tail by id",
      true,
      namesakes,
      emptyExport,
      [E, "list", "export --session-id"],
      { ...found("c1", "goose session list", "/l"), namesakes: { ids: ["e1", "c1"], goosePick: "e1" } },
      1,
    ],
  ])("%s", async (_name, db, list, exportOut, want, probe, visible) => {
    const home = at(`read-session-${n++}`);
    await mkdir(home);
    const goose = path.join(home, "goose");
    await writeFile(goose, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    if (db) {
      const file = path.join(home, ".local/share/goose/sessions/sessions.db");
      await mkdir(path.dirname(file), { recursive: true });
      await buildSessionsDb(file, [s("s1")], [m("s1", "user", "go", 100, undefined, "msg_go")]);
    }
    const calls = path.join(home, "calls");
    const env = {
      PATH: "/usr/bin:/bin",
      CALLS: calls,
      LIST: JSON.stringify(list),
      EXPORT: exportOut ? JSON.stringify(exportOut) : "",
      EXPORT_BY_ID: JSON.stringify(byId),
    };
    const read = await readSession({ goose, name: "task", env, home, cwd: home });
    expect(read.probe).toMatchObject(probe);
    expect((await readFile(calls, "utf8")).trim().split("\n")).toEqual(want);
    if (read.probe.kind === "found") expect(read.tail).toMatchObject({ kind: "read", tail: { visibleCount: visible } });
    expect(read.sessions === null).toBe(!want.includes("list"));
  });

  it.each([
    ["the list would say absent", []],
    ["the list would find a namesake elsewhere", listed],
  ])(
    "a first start (no database, the module never launched Goose here): absent, asking Goose nothing, even if %s",
    async (_name, list) => {
      const home = at(`read-session-${n++}`);
      await mkdir(home);
      const goose = path.join(home, "goose");
      await writeFile(goose, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      const calls = path.join(home, "calls");
      const env = { PATH: "/usr/bin:/bin", CALLS: calls, LIST: JSON.stringify(list), EXPORT: "" };
      const read = await readSession({ goose, name: "task", env, home, cwd: home, firstLaunch: true });
      expect(read.probe).toMatchObject({ kind: "absent", source: expect.stringContaining("no Goose database at") });
      expect(read.tail).toMatchObject({ kind: "unknown" });
      expect(read.sessions).toBeNull();
      await expect(readFile(calls, "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    },
  );

  it("a database appears after all: a first start asks Goose as any other start", async () => {
    const home = at(`read-session-${n++}`);
    const file = path.join(home, ".local/share/goose/sessions/sessions.db");
    await mkdir(path.dirname(file), { recursive: true });
    await buildSessionsDb(file, [s("s1")], [m("s1", "user", "go", 100, undefined, "msg_go")]);
    const goose = path.join(home, "goose");
    await writeFile(goose, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    const calls = path.join(home, "calls");
    const env = { PATH: "/usr/bin:/bin", CALLS: calls, LIST: "[]", EXPORT: JSON.stringify(exported) };
    const read = await readSession({ goose, name: "task", env, home, cwd: home, firstLaunch: true });
    expect(read.probe).toMatchObject(found("s9", "goose session export", "/x"));
    expect((await readFile(calls, "utf8")).trim().split("\n")).toEqual([E]);
  });

  it("the export's session is empty and neither the list nor sqlite3 answers: the export's session, not unknown", async () => {
    const home = at(`read-session-${n++}`);
    const file = path.join(home, ".local/share/goose/sessions/sessions.db");
    await mkdir(path.dirname(file), { recursive: true });
    await buildSessionsDb(file, [s("e1")], []);
    const goose = path.join(home, "goose");
    await writeFile(goose, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    const env = {
      PATH: "/nonexistent",
      CALLS: path.join(home, "calls"),
      LIST: "not a list",
      EXPORT: JSON.stringify(emptyExport),
    };
    const read = await readSession({ goose, name: "task", env, home, cwd: home });
    expect(read.probe).toEqual({
      kind: "found",
      id: "e1",
      messages: 0,
      workingDir: "/x",
      source: "goose session export",
    });
    expect(read.tail).toMatchObject({ kind: "read", tail: { visibleCount: 0 } });
  });
});

const listed = (over: Record<string, unknown>) => {
  const base = { id: "20261122_1", name: "task-1", session_type: "user", message_count: 2, working_dir: "/home/coder" };
  return JSON.stringify([{ ...base, updated_at: "2026-11-22T10:00:00Z", ...over }]);
};

describe("findNamedSession", () => {
  const rows = (...r: Array<[string, number, string]>) =>
    JSON.stringify(r.map(([id, n, h]) => ({ id, name: "t", message_count: n, updated_at: `2026-11-22T${h}:00:00Z` })));
  const found = { kind: "found" };
  const absent = { kind: "absent", source: "goose session list" };
  it.each([
    ["a name match, with its count", listed({}), "task-1", { ...found, id: "20261122_1", messages: 2 }],
    ["the id too, as goose --resume --name does", listed({ name: "other" }), "20261122_1", found],
    ["no name that merely contains it", listed({ name: "task-10" }), "task-1", absent],
    ["no sub_agent (not resumable)", listed({ session_type: "sub_agent" }), "task-1", absent],
    ["the latest active of two", rows(["a", 0, "09"], ["b", 4, "11"]), "t", { ...found, id: "b", messages: 4 }],
    ["then the highest id", rows(["id1", 1, "10"], ["id2", 2, "10"]), "t", { ...found, id: "id2" }],
    [
      "the conversation, not a newer empty namesake Goose's resume would take",
      rows(["conv", 3, "09"], ["empty", 0, "11"]),
      "t",
      { ...found, id: "conv", messages: 3, namesakes: { ids: ["empty", "conv"], goosePick: "empty" } },
    ],
    [
      "the newest conversation of several namesakes",
      rows(["old", 2, "08"], ["new", 1, "09"], ["empty", 0, "11"]),
      "t",
      { ...found, id: "new", namesakes: { ids: ["empty", "new", "old"], goosePick: "empty" } },
    ],
    [
      "Goose's pick when no namesake holds a message",
      rows(["e1", 0, "09"], ["e2", 0, "11"]),
      "t",
      { ...found, id: "e2", messages: 0, namesakes: { ids: ["e2", "e1"], goosePick: "e2" } },
    ],
    // Goose 1.10-1.11 lists name sessions in description.
    [
      "an old list's name",
      '[{"id":"1","description":"task-1","message_count":3}]',
      "task-1",
      { ...found, messages: 3 },
    ],
    ["nothing in empty output", "", "task-1", absent],
  ])("finds %s", (_, out, name, want) => {
    expect(findNamedSession(out, name)).toMatchObject(want);
  });

  it("names no namesakes when one session has the name", () => {
    expect(
      findNamedSession(
        rows(["a", 0, "09"], ["b", 2, "11"]).replace('"name":"t","message_count":0', '"name":"u","message_count":0'),
        "t",
      ),
    ).not.toHaveProperty("namesakes");
  });

  it("rejects output that is not a list", () => {
    expect(() => findNamedSession('{"error":"x"}', "task-1")).toThrow();
    expect(() => findNamedSession("No sessions found", "task-1")).toThrow();
  });
});

describe("describeNamesakes", () => {
  const probe = (id: string, messages: number, ids: string[] | null): SessionProbe & { kind: "found" } => {
    const base = { kind: "found", id, messages, workingDir: null, source: "goose session list" } as const;
    return ids === null ? base : { ...base, namesakes: { ids, goosePick: ids[0] as string } };
  };
  it.each([
    ["one session has the name: no line", probe("a", 2, null), null],
    [
      "the conversation is not what Goose's resume by name would take",
      probe("conv", 3, ["empty", "conv"]),
      'Goose sessions are named "t" (empty, conv); resuming conv by its id, the most recently active one holding messages (3); goose session --resume --name would have taken the empty empty',
    ],
    [
      "Goose would take the same one",
      probe("b", 1, ["b", "a"]),
      'Goose sessions are named "t" (b, a); resuming b by its id, the most recently active one holding messages (1)',
    ],
    [
      "none holds a message",
      probe("e2", 0, ["e2", "e1"]),
      'Goose sessions are named "t" (e2, e1); resuming e2 by its id, none holds a message, so the most recently active one',
    ],
  ] as const)("%s", (_name, p, line) => {
    const said = describeNamesakes("t", p);
    if (line === null) expect(said).toBeNull();
    else expect(said).toBe(`${p.namesakes?.ids.length} ${line}`);
  });
});

it("gooseSessionsDb follows GOOSE_PATH_ROOT, XDG_DATA_HOME, then the default", () => {
  expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "/g" }, "/h")).toBe("/g/data/sessions/sessions.db");
  expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "relative", XDG_DATA_HOME: "/x" }, "/h")).toBe(
    "/x/goose/sessions/sessions.db",
  );
  expect(gooseSessionsDb({}, "/h")).toBe("/h/.local/share/goose/sessions/sessions.db");
});

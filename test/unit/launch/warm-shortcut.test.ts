import { describe, expect, it } from "vitest";
import { conversationEnd, decideShortcut, type ShortcutNow } from "../../../src/launch/warm-shortcut.js";
import type { FileIdentity } from "../../../src/lib/files.js";
import type { LaunchRecord, StopFindings } from "../../../src/lifecycle/launch-record.js";

const file = (ino: string, size = "4096", mtime = "1700000000000000001"): FileIdentity => ({
  kind: "file",
  dev: "2049",
  ino,
  size,
  mtime_ns: mtime,
  ctime_ns: mtime,
});
const missing: FileIdentity = { kind: "missing" };
const DB = "/h/.local/share/goose/sessions/sessions.db";
const WAL = `${DB}-wal`;
const STATE = "/h/.goose-module/agentapi-state.json";
const OWNER = `${STATE}.owner.json`;
const files = { [DB]: file("10"), [WAL]: file("11", "8192"), [STATE]: file("12"), [OWNER]: file("13") };

const now: ShortcutNow = {
  sessionName: "goose-task",
  continueSession: true,
  restart: false,
  folder: "/h/project",
  db: DB,
  binary: "/h/.local/bin/goose",
  binaryIdentity: file("20"),
  files,
};

const LAUNCH = "2026-11-27T10:00:00.000Z";

/** The launch record and the stop's findings, as one thing to change. */
type Last = LaunchRecord & { stopped: StopFindings | null };

const record: Last = {
  ...{ persistence: true, persistence_reason: "r", agentapi_binary: "/b/agentapi", agentapi_version: "0.12.2" },
  ...{ port: 3284, state_file: STATE, state_backup: null, pid_file: "/h/.goose-module/agentapi.pid" },
  ...{ session_name: "goose-task", mode: "warm", interrupted_turn: { action: "none", reason: "" }, started_at: LAUNCH },
  goose: {
    db: DB,
    binary: "/h/.local/bin/goose",
    binary_identity: file("20"),
    folder: "/h/project",
    session_id: "20261127_1",
    messages: 4,
    working_dir: "/h/project",
    conversation_end: "answered",
  },
  stopped: { launch: LAUNCH, at: "2026-11-27T11:00:00.000Z", files },
};

type Change = (r: Last, n: ShortcutNow) => void;
const recorded = (change: Change = () => {}) => {
  const r: Last = structuredClone(record);
  const n: ShortcutNow = structuredClone(now);
  change(r, n);
  const { stopped, ...launch } = r;
  return decideShortcut({ first: false, record: launch }, stopped, n);
};

describe("decideShortcut", () => {
  it("takes Goose's answer from the record when everything is as the last stop left it: the session by id, its count, no turn to carry on", () => {
    const shortcut = recorded();
    expect(shortcut).toMatchObject({
      take: true,
      probe: { kind: "found", id: "20261127_1", messages: 4, workingDir: "/h/project" },
      tail: { kind: "read", tail: { unanswered: false } },
    });
  });

  it.each<[string, Change, RegExp]>([
    ["no stop saw Goose leave by itself", (r) => (r.stopped = null), /no stop saw/],
    [
      "the stop's findings are about an earlier launch",
      (r) => (r.started_at = "2026-11-27T12:00:00.000Z"),
      /no stop saw/,
    ],
    [
      "the last launch was cold",
      (r) => {
        r.mode = "cold";
        r.goose.session_id = null;
      },
      /new session/,
    ],
    ["the session name changed", (_, n) => (n.sessionName = "other"), /session name changed/],
    ["the session held no message", (r) => (r.goose.messages = 0), /held no message/],
    ["no session was found", (r) => (r.goose.messages = null), /held no message/],
    ["the last turn waited unanswered", (r) => (r.goose.conversation_end = "unanswered"), /unanswered/],
    ["the conversation's end was not read", (r) => (r.goose.conversation_end = "unknown"), /unknown/],
    ["the folder changed", (_, n) => (n.folder = "/h/other"), /folder changed/],
    [
      "the database is looked for elsewhere (GOOSE_PATH_ROOT)",
      (_, n) => (n.db = "/r/data/sessions/sessions.db"),
      /looked for at/,
    ],
    ["another goose binary (GOOSE_BIN)", (_, n) => (n.binary = "/usr/bin/goose"), /goose binary is/],
    ["the goose binary was replaced", (_, n) => (n.binaryIdentity = file("21")), /changed since the last start/],
    ["the goose binary is gone", (_, n) => (n.binaryIdentity = missing), /changed since the last start/],
    ["sessions.db grew", (_, n) => (n.files[DB] = file("10", "8192")), /sessions\.db changed/],
    [
      "sessions.db was touched",
      (_, n) => (n.files[DB] = file("10", "4096", "1700000000000000002")),
      /sessions\.db changed/,
    ],
    ["sessions.db was replaced", (_, n) => (n.files[DB] = file("99")), /sessions\.db changed/],
    [
      "sessions.db is gone",
      (r, n) => {
        n.files[DB] = missing;
        r.stopped!.files[DB] = missing;
      },
      /sessions\.db is missing/,
    ],
    [
      "sessions.db is a link",
      (_, n) => (n.files[DB] = { kind: "other", why: "not a regular file" }),
      /not a regular file/,
    ],
    ["the write-ahead log appeared", (r) => (r.stopped!.files[WAL] = missing), /-wal changed/],
    ["the write-ahead log grew", (_, n) => (n.files[WAL] = file("11", "12288")), /-wal changed/],
    ["the chat changed", (_, n) => (n.files[STATE] = file("12", "5000")), /agentapi-state\.json changed/],
    ["the chat is gone", (_, n) => (n.files[STATE] = missing), /agentapi-state\.json changed/],
    ["the chat owner's record changed", (_, n) => (n.files[OWNER] = file("14")), /owner\.json changed/],
    ["the stop did not record a file the start watches", (r) => delete r.stopped!.files[OWNER], /did not record/],
    ["a supervisor's restart", (_, n) => (n.restart = true), /restart/],
    ["continue is false", (_, n) => (n.continueSession = false), /continue is false/],
  ])("asks Goose when %s", (_, change, reason) => {
    const shortcut = recorded(change);
    expect(shortcut.take).toBe(false);
    expect(shortcut.take ? "" : shortcut.reason).toMatch(reason);
  });

  it("takes it for a chat that was missing at the stop and still is", () => {
    const shortcut = recorded((r, n) => {
      r.stopped!.files[STATE] = missing;
      n.files[STATE] = missing;
    });
    expect(shortcut.take).toBe(true);
  });

  it("takes it after a launch that carried on an interrupted turn the stop then saw answered", () => {
    expect(recorded((r) => (r.goose.conversation_end = "continued")).take).toBe(true);
  });

  it.each([
    ["never launched", { first: true } as const, /never launched/],
    ["a record it cannot use", { first: false, problem: "the launch record is not usable (x)" } as const, /not usable/],
  ])("asks Goose when the module %s", (_, given, reason) => {
    const shortcut = decideShortcut(given, record.stopped, now);
    expect(shortcut.take ? "" : shortcut.reason).toMatch(reason);
  });
});

describe("conversationEnd", () => {
  const tail = (
    lastVisibleRole: string | null,
    unanswered: boolean,
    modelError: { kind: string; userText: string; firstMessage: boolean } | null = null,
  ) =>
    ({
      kind: "read",
      tail: {
        visibleCount: 2,
        lastVisibleRole,
        lastVisibleUserText: null,
        lastVisibleId: null,
        unanswered,
        modelError,
      },
      source: "t",
    }) as const;
  const none = { action: "none", reason: "" } as const;
  const typedFailure = { kind: "authentication", userText: "Now the docs.", firstMessage: false };
  const promptFailure = { kind: "authentication", userText: "Fix the login test.", firstMessage: true };
  it.each([
    ["cold", tail("assistant", false), none, "unknown"],
    ["warm", tail("assistant", false), none, "answered"],
    ["warm", tail("user", false), none, "answered"],
    ["warm", tail("user", true), { action: "wait", reason: "" }, "unanswered"],
    ["warm", tail("user", true), { action: "continue", reason: "" }, "continued"],
    // A turn that ended in a model error, left to whoever typed its message: Goose will not answer it by itself.
    ["warm", tail("assistant", false, typedFailure), { action: "wait", reason: "" }, "unanswered"],
    ["warm", tail("assistant", false, promptFailure), { action: "continue", reason: "" }, "continued"],
    ["warm", { kind: "unknown", reason: "x" }, none, "unknown"],
  ] as const)("%s, tail %o, turn %o -> %s", (mode, t, turn, end) => {
    expect(conversationEnd(mode, t, turn)).toBe(end);
  });
});

import { lstat, mkdir, readFile, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { fileIdentity } from "../../../src/lib/files.js";
import {
  identities,
  readLaunchRecord,
  readRecordedLaunch,
  recordStopFindings,
  recordSupervisorGaveUp,
  watchedFiles,
} from "../../../src/lifecycle/launch-record.js";
import { scratchDir } from "../scratch.js";

describe("readLaunchRecord", () => {
  const settings = { port: 3284, pidFile: "/s/agentapi.pid", stateFile: "/s/state.json" };
  const why = "agentapi 0.12.2 >= 0.12.0";
  const record = {
    ...{ persistence: true, persistence_reason: why, agentapi_binary: "/b/agentapi", agentapi_version: "0.12.2" },
    ...{ port: 4000, state_file: "/r/state.json", state_backup: "/r/state.json.bak", pid_file: "/r/agentapi.pid" },
    ...{ session_name: "s", mode: "warm", interrupted_turn: { action: "none", reason: "" }, started_at: "2026-11-22" },
    goose: {
      ...{ db: "/h/sessions.db", binary: "/h/goose", binary_identity: { kind: "missing" }, folder: "/h/p" },
      ...{ session_id: "20261127_1", messages: 2, working_dir: "/h/p", conversation_end: "answered" },
    },
  };
  const at = scratchDir("stop-target");
  let n = 0;
  const file = async () => at(`launch-${n++}.json`);

  it("acts on what the start launched, not on the settings", async () => {
    const f = await file();
    await writeFile(f, JSON.stringify(record));
    expect(await readLaunchRecord(f, settings)).toEqual({
      launched: {
        ...{ port: 4000, pidFile: "/r/agentapi.pid", stateFile: "/r/state.json", stateBackup: "/r/state.json.bak" },
        ...{ persistence: true, persistenceReason: why, gooseDb: "/h/sessions.db" },
      },
      note: null,
    });
  });

  it("acts on a record without Goose's database (an earlier module version), which then gets no stop findings", async () => {
    const f = await file();
    const { goose: _, ...earlier } = record;
    await writeFile(f, JSON.stringify(earlier));
    expect((await readLaunchRecord(f, settings)).launched).toMatchObject({ port: 4000, gooseDb: null });
  });

  const fallback = { ...settings, stateBackup: null, persistence: false, gooseDb: null };
  it.each([
    [
      "the start left no record",
      async () => {},
      /^the start script left no launch record, so persistence was never confirmed$/,
    ],
    [
      "the record does not fit, naming the field",
      (f: string) => writeFile(f, JSON.stringify({ ...record, port: "4" })),
      /launch record.port must be a whole number/,
    ],
    ["the record is not a file", (f: string) => mkdir(f), /cannot be read \(EISDIR\)/],
  ])("falls back to the settings, persistence unconfirmed, when %s", async (_, make, why) => {
    const f = await file();
    await make(f);
    const { launched, note } = await readLaunchRecord(f, settings);
    expect(launched).toEqual({ ...fallback, persistenceReason: note });
    expect(note).toMatch(why);
  });
});

describe("what the stop records for the next start", () => {
  const at = scratchDir("stop-findings");
  const record = {
    ...{ persistence: true, persistence_reason: "r", agentapi_binary: "/b/agentapi", agentapi_version: "0.12.2" },
    ...{ port: 4000, state_file: "/r/state.json", state_backup: null, pid_file: "/r/agentapi.pid" },
    ...{ session_name: "s", mode: "warm", interrupted_turn: { action: "none", reason: "" }, started_at: "2026-11-22" },
    goose: {
      ...{ db: "/h/sessions.db", binary: "/h/goose", binary_identity: { kind: "missing" }, folder: "/h/p" },
      ...{ session_id: "20261127_1", messages: 2, working_dir: "/h/p", conversation_end: "answered" },
    },
  };

  it("adds the files' identity to the launch record, mode 0600, and the next start reads it back", async () => {
    const dir = await at("round-trip");
    await mkdir(dir, { recursive: true });
    const f = `${dir}/launch.json`;
    await writeFile(f, JSON.stringify(record), { mode: 0o644 });
    const db = `${dir}/sessions.db`;
    await writeFile(db, "data");
    const files = await identities(watchedFiles(db, `${dir}/state.json`));
    expect(Object.keys(files)).toEqual([db, `${db}-wal`, `${dir}/state.json`, `${dir}/state.json.owner.json`]);
    expect(await recordStopFindings(f, { at: "2026-11-27T11:00:00.000Z", files })).toBe(true);
    expect((await lstat(f)).mode & 0o777).toBe(0o600);
    const read = await readRecordedLaunch(f);
    expect(read).toMatchObject({ first: false, record: { sessionName: "s", mode: "warm", goose: record.goose } });
    expect("record" in read && read.record.stopped).toEqual({ at: "2026-11-27T11:00:00.000Z", files });
    expect(files[db]).toMatchObject({ kind: "file", size: "4" });
    expect(files[`${db}-wal`]).toEqual({ kind: "missing" });
  });

  it("a record the stop could not act on is left as it is", async () => {
    const dir = await at("not-ours");
    await mkdir(dir, { recursive: true });
    const f = `${dir}/launch.json`;
    await writeFile(f, "[1]");
    expect(await recordStopFindings(f, { at: "x", files: {} })).toBe(false);
    expect(await readFile(f, "utf8")).toBe("[1]");
  });

  it.each([
    ["no record", null, /^$/],
    ["a record of an earlier version, without goose", JSON.stringify({ session_name: "s", mode: "warm" }), /goose/],
    [
      "an identity that is not decimal",
      JSON.stringify({
        ...record,
        stopped: { at: "x", files: { "/h/sessions.db": { kind: "file", dev: "1", ino: "2", size: "-1" } } },
      }),
      /size/,
    ],
    ["not JSON", "{", /not usable/],
  ])("the next start finds %s", async (_, text, problem) => {
    const dir = await at("read-back");
    await mkdir(dir, { recursive: true });
    const f = `${dir}/launch-${Math.random().toString(16).slice(2)}.json`;
    if (text !== null) await writeFile(f, text);
    const read = await readRecordedLaunch(f);
    if (text === null) expect(read).toEqual({ first: true });
    else expect("problem" in read ? read.problem : "").toMatch(problem);
  });
});

describe("fileIdentity", () => {
  const at = scratchDir("file-identity");
  it("changes with a touch and with a replacement; a link is never a file, whatever it points to", async () => {
    const dir = await at("f");
    await mkdir(dir, { recursive: true });
    const f = `${dir}/db`;
    await writeFile(f, "abcd");
    const first = await fileIdentity(f);
    expect(first).toMatchObject({ kind: "file", size: "4" });
    expect(await fileIdentity(f)).toEqual(first);
    await writeFile(`${dir}/db2`, "abcd");
    expect(await fileIdentity(`${dir}/db2`)).not.toEqual(first);
    await utimes(f, new Date(2020, 0, 1), new Date(2020, 0, 1));
    const touched = await fileIdentity(f);
    expect(touched).not.toEqual(first);
    expect(touched).toMatchObject({ kind: "file", size: "4" });
    await symlink(f, `${dir}/link`);
    expect(await fileIdentity(`${dir}/link`)).toEqual({ kind: "other", why: "not a regular file" });
    expect(await fileIdentity(`${dir}/link`, true)).toEqual(touched);
    expect(await fileIdentity(`${dir}/none`)).toEqual({ kind: "missing" });
  });
});

describe("recordSupervisorGaveUp", () => {
  const record = {
    ...{ persistence: true, persistence_reason: "r", agentapi_binary: "/b/agentapi", agentapi_version: "0.12.2" },
    ...{ port: 4000, state_file: "/r/state.json", state_backup: null, pid_file: "/r/agentapi.pid" },
    ...{ session_name: "s", mode: "warm", interrupted_turn: { action: "none", reason: "" }, started_at: "2026-11-22" },
  };
  const at = scratchDir("gave-up");
  let n = 0;
  const now = Date.UTC(2026, 10, 27, 12, 0, 0);

  it("adds the reason and the time to the record, keeping every member of it", async () => {
    const f = at(`launch-${n++}.json`);
    await writeFile(f, JSON.stringify({ ...record, from_a_newer_module: [1] }));
    await recordSupervisorGaveUp(f, "5 restarts failed", now);
    expect(JSON.parse(await readFile(f, "utf8"))).toEqual({
      ...record,
      from_a_newer_module: [1],
      supervisor: { gave_up_at: "2026-11-27T12:00:00.000Z", reason: "5 restarts failed" },
    });
    expect((await stat(f)).mode & 0o777).toBe(0o600);
  });

  it.each([
    ["a record the stop cannot act on", JSON.stringify({ ...record, port: "4000" }), /launch record\.port must be/],
    ["a list", JSON.stringify([record]), /launch record must be an object/],
  ])("leaves %s as it is, naming what is wrong", async (_, text, message) => {
    const f = at(`launch-${n++}.json`);
    await writeFile(f, text);
    await expect(recordSupervisorGaveUp(f, "5 restarts failed", now)).rejects.toThrow(message);
    expect(await readFile(f, "utf8")).toBe(text);
  });
});

import { lstat, mkdir, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { fileIdentity } from "../../../src/lib/files.js";
import {
  identities,
  type LaunchRecord,
  readLaunchRecord,
  readStopFindings,
  stopFindingsFile,
  watchedFiles,
  writeLaunchRecord,
  writeStopFindings,
} from "../../../src/lifecycle/launch-record.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { scratchDir } from "../scratch.js";

const RECORD = {
  ...{ persistence: true, persistence_reason: "agentapi 0.12.2 >= 0.12.0", agentapi_binary: "/b/agentapi" },
  ...{ agentapi_version: "0.12.2", port: 4000, state_file: "/r/state.json", state_backup: "/r/state.json.bak" },
  ...{ pid_file: "/r/agentapi.pid", session_name: "s", mode: "warm", interrupted_turn: { action: "none", reason: "" } },
  started_at: "2026-11-22T10:00:00.000Z",
  goose: {
    ...{ db: "/h/sessions.db", binary: "/h/goose", binary_identity: { kind: "missing" }, folder: "/h/p" },
    ...{ session_id: "20261127_1", messages: 2, working_dir: "/h/p", conversation_end: "answered" },
  },
};

describe("readLaunchRecord: the one reader, for the stop and the next start", () => {
  const at = scratchDir("launch-record");
  let n = 0;
  const file = async () => at(`launch-${n++}.json`);

  it("gives back what the launch wrote", async () => {
    const f = await file();
    await writeLaunchRecord(f, RECORD as LaunchRecord);
    expect(await readLaunchRecord(f)).toEqual({ first: false, record: RECORD });
    expect((await stat(f)).mode & 0o777).toBe(0o600);
  });

  it("says there is none only when nothing is there", async () => {
    expect(await readLaunchRecord(await file())).toEqual({ first: true });
  });

  const { goose: _, ...earlier } = RECORD;
  it.each<[string, (f: string) => Promise<unknown>, RegExp]>([
    [
      "a field that does not fit, naming it",
      (f) => writeFile(f, JSON.stringify({ ...RECORD, port: "4" })),
      /launch record.port must be a whole number/,
    ],
    [
      "an earlier version's record, without goose",
      (f) => writeFile(f, JSON.stringify(earlier)),
      /launch record.goose must be an object/,
    ],
    [
      "an identity that is not decimal",
      (f) =>
        writeFile(
          f,
          JSON.stringify({
            ...RECORD,
            goose: {
              ...RECORD.goose,
              binary_identity: { kind: "file", dev: "1", ino: "2", size: "-1", mtime_ns: "1", ctime_ns: "1" },
            },
          }),
        ),
      /size must be a whole number/,
    ],
    ["not JSON", (f) => writeFile(f, "{"), /not usable/],
    ["not a file", (f) => mkdir(f), /cannot be read \(EISDIR\)/],
  ])("gives the problem for %s", async (_, make, problem) => {
    const f = await file();
    await make(f);
    const read = await readLaunchRecord(f);
    expect("problem" in read ? read.problem : "").toMatch(problem);
  });
});

describe("what the stop records for the next start", () => {
  const at = scratchDir("stop-findings");

  it("the files' identity, about the launch, mode 0600, read back by the next start", async () => {
    const dir = await at("round-trip");
    await mkdir(dir, { recursive: true });
    const db = `${dir}/sessions.db`;
    await writeFile(db, "data");
    const files = await identities(watchedFiles(db, `${dir}/state.json`));
    expect(Object.keys(files)).toEqual([db, `${db}-wal`, `${dir}/state.json`, `${dir}/state.json.owner.json`]);
    expect(files[db]).toMatchObject({ kind: "file", size: "4" });
    expect(files[`${db}-wal`]).toEqual({ kind: "missing" });
    const f = stopFindingsFile({ dir } as ModulePaths);
    const findings = { launch: RECORD.started_at, at: "2026-11-27T11:00:00.000Z", files };
    await writeStopFindings(f, findings);
    expect((await lstat(f)).mode & 0o777).toBe(0o600);
    expect(await readStopFindings(f)).toEqual(findings);
  });

  it.each([
    ["no file", null],
    ["not JSON", "{"],
    ["no launch", JSON.stringify({ at: "x", files: {} })],
    [
      "an identity that is not decimal",
      JSON.stringify({ launch: "l", at: "x", files: { "/h/db": { kind: "file", size: "-1" } } }),
    ],
  ])("the next start finds none in %s", async (_, text) => {
    const dir = await at("read-back");
    await mkdir(dir, { recursive: true });
    const f = `${dir}/findings-${Math.random().toString(16).slice(2)}.json`;
    if (text !== null) await writeFile(f, text);
    expect(await readStopFindings(f)).toBeNull();
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

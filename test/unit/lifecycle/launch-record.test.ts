import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readLaunchRecord, recordSupervisorGaveUp } from "../../../src/lifecycle/launch-record.js";
import { scratchDir } from "../scratch.js";

describe("readLaunchRecord", () => {
  const settings = { port: 3284, pidFile: "/s/agentapi.pid", stateFile: "/s/state.json" };
  const why = "agentapi 0.12.2 >= 0.12.0";
  const record = {
    ...{ persistence: true, persistence_reason: why, agentapi_binary: "/b/agentapi", agentapi_version: "0.12.2" },
    ...{ port: 4000, state_file: "/r/state.json", state_backup: "/r/state.json.bak", pid_file: "/r/agentapi.pid" },
    ...{ session_name: "s", mode: "warm", interrupted_turn: { action: "none", reason: "" }, started_at: "2026-11-22" },
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
        ...{ persistence: true, persistenceReason: why },
      },
      note: null,
    });
  });

  const fallback = { ...settings, stateBackup: null, persistence: false };
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

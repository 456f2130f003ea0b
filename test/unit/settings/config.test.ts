import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { readStopTarget } from "../../../src/lifecycle/launch-record.js";
import {
  parseStartConfig,
  parseStopConfig,
  readSettingsDocument,
  takeOwnScript,
} from "../../../src/settings/config.js";
import { CODER, edited, HOME, startDocument, stopDocument, URL_G } from "./documents.js";

const DIR = "/home/u/.coder-modules/coder/goose";

describe("parseStartConfig", () => {
  it("puts the state and PID files in the module folder when the template leaves them empty", () => {
    expect(parseStartConfig(startDocument(), HOME).paths).toMatchObject({
      stateFile: `${DIR}/agentapi-state.json`,
      stateBackup: `${DIR}/agentapi-state.json.bak`,
      pidFile: `${DIR}/agentapi.pid`,
      launchRecord: `${DIR}/agentapi-launch.json`,
      logs: `${DIR}/logs`,
      supervisorPid: `${DIR}/supervisor.pid`,
    });
  });

  it("keeps the template's own paths", () => {
    const doc = edited(startDocument(), "layer.state_file", "/var/lib/goose/chat.json");
    expect(parseStartConfig(edited(doc, "layer.pid_file", "/run/g.pid"), HOME).paths).toMatchObject({
      stateFile: "/var/lib/goose/chat.json",
      stateOwner: "/var/lib/goose/chat.json.owner.json",
      pidFile: "/run/g.pid",
    });
  });

  it("brings the layer's and the agent's settings together", () => {
    const config = parseStartConfig(startDocument(), HOME);
    expect(config.folder).toBe("/home/u/project");
    expect(config.supervise).toBe(false);
    const layer = { port: 3284, chatBasePath: "/@a/w.1/apps/goose/chat", persistence: true };
    const agentapi = { install: true, version: "v9.9.9", downloadUrl: "https://mirror.example/agentapi" };
    expect(config.agentapi).toEqual({ ...agentapi, sha256: { amd64: "a".repeat(64) }, ...layer });
    expect(config.goose).toMatchObject({ continueInterruptedTurn: false, mode: "smart_approve", installerUrl: "" });
    expect(config.goose.downloadUrl).toBe(URL_G);
    expect(config.goose.extensions.github).toEqual({ type: "stdio", cmd: "gh-mcp" });
    expect(config.goose.installScript).toEqual({ pre: "", post: "echo hi" });
    expect(config.goose.sha256).toEqual({});
    const access = { allowedHosts: ["proxy.example.com"], allowedOrigins: [], accessUrl: CODER, subdomain: false };
    expect(config.access).toEqual(access);
  });

  // Each message is `settings.<field> <rest>`.
  it.each([
    ["layer.port", "3284", 'must be a whole number from 1 to 65535, but it is the string "3284"'],
    ["layer.port", 70000, "must be a whole number from 1 to 65535, but it is number 70000"],
    ["layer.persistence", undefined, "must be true or false, but it is missing"],
    ["agent.supervise", "yes", 'must be true or false, but it is the string "yes"'],
    ["layer.state_file", "state.json", 'must be an absolute path or empty, but it is the string "state.json"'],
    ["agent.goose.model", null, "must be a string, but it is null"],
    ["agent.goose", [], "must be an object, but it is an array"],
    ["agent.goose.extensions.github", "yes", 'must be an object, but it is the string "yes"'],
    ["agent.agentapi.sha256.arm64", 64, "must be a string, but it is number 64"],
    ["agent.goose.sha256", "abc", 'must be an object, but it is the string "abc"'],
    ["agent.goose.install_script.pre", 1, "must be a string, but it is number 1"],
    ["agent.goose.mode", "yolo", 'must be one of auto, smart_approve, approve, chat, but it is the string "yolo"'],
    ["agent.access.allowed_hosts", "localhost", 'must be a list of strings, but it is the string "localhost"'],
    ["agent.access.allowed_origins", ["https://a.example", 1], "must be a list of strings, but it is an array"],
    ["agent.access", undefined, "must be an object, but it is missing"],
  ])("rejects %s = %j, naming the field", (at, value, rest) => {
    expect(() => parseStartConfig(edited(startDocument(), at, value), HOME)).toThrow(`settings.${at} ${rest}`);
  });

  it("says how to fix a document that does not fit", () => {
    expect(() => parseStartConfig("[]", HOME)).toThrow(/settings must be an object.*re-apply the template/);
  });
});

describe("parseStopConfig", () => {
  it("reads the task, the snapshot switch and the template's bounds", () => {
    const config = parseStopConfig(stopDocument(), HOME);
    expect(config.port).toBe(3284);
    expect(config.task).toEqual({ enabled: true, id: "t-1", logSnapshot: false });
    expect(config.bounds).toEqual({ turnMs: 2000, termMs: 20000 });
    expect(config.paths.pidFile).toBe(`${DIR}/agentapi.pid`);
    expect(config.gooseMode).toBe("approve");
  });

  it.each([
    ["agent.goose_mode", "Auto", "must be one of auto, smart_approve, approve, chat"],
    ["agent.timeouts.turn_ms", 300_001, "must be a whole number from 0 to 300000"],
    ["agent.timeouts.term_ms", 1.5, "must be a whole number from 0 to 300000"],
    ["layer.task.id", undefined, "must be a string, but it is missing"],
    ["agent.log_snapshot", "true", 'must be true or false, but it is the string "true"'],
  ])("rejects %s = %j, naming the field", (at, value, rest) => {
    expect(() => parseStopConfig(edited(stopDocument(), at, value), HOME)).toThrow(`settings.${at} ${rest}`);
  });
});

const NOT_GZIP = "bm90IGd6aXA=";
const gz = (text: string) => gzipSync(text).toString("base64");

describe("readSettingsDocument", () => {
  it("decodes the document and removes it and the script's code from the environment, so no child gets them", () => {
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SETTINGS: gz('{"a":1}') };
    expect(readSettingsDocument(env)).toEqual({ a: 1 });
    expect(env).not.toHaveProperty("CODER_MODULE_SETTINGS");
    const both: NodeJS.ProcessEnv = { CODER_MODULE_SETTINGS: gz('{"a":1}'), CODER_MODULE_SCRIPT: "code" };
    readSettingsDocument(both);
    expect(both).not.toHaveProperty("CODER_MODULE_SCRIPT");
  });

  it("names the variable when it is missing, and says to re-apply the template when it is not gzip+base64 JSON", () => {
    expect(() => readSettingsDocument({})).toThrow("no settings given (CODER_MODULE_SETTINGS is not set)");
    expect(() => readSettingsDocument({ CODER_MODULE_SETTINGS: NOT_GZIP })).toThrow(
      /cannot read the module settings: .*Re-apply the template/,
    );
  });
});

describe("takeOwnScript", () => {
  it("decodes the script's code and removes it from the environment", () => {
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SCRIPT: gz("console.log(1)") };
    expect(takeOwnScript(env)?.toString("utf8")).toBe("console.log(1)");
    expect(env).not.toHaveProperty("CODER_MODULE_SCRIPT");
  });

  it("null when the wrapper passed none, or something that is not gzip+base64", () => {
    expect(takeOwnScript({})).toBeNull();
    expect(takeOwnScript({ CODER_MODULE_SCRIPT: NOT_GZIP })).toBeNull();
  });
});

describe("readStopTarget", () => {
  const settings = { port: 3284, pidFile: "/s/agentapi.pid", stateFile: "/s/state.json" };
  const why = "agentapi 0.12.2 >= 0.12.0";
  const record = {
    ...{
      persistence: true,
      persistence_reason: why,
      agentapi_binary: "/b/agentapi",
      agentapi_version: "0.12.2",
      port: 4000,
    },
    ...{
      state_file: "/r/state.json",
      state_backup: "/r/state.json.bak",
      pid_file: "/r/agentapi.pid",
      session_name: "s",
    },
    ...{ mode: "warm", interrupted_turn: { action: "none", reason: "" }, started_at: "2026-11-22T10:00:00.000Z" },
  };
  const file = async (name = "agentapi-launch.json") =>
    path.join(await mkdtemp(path.join(tmpdir(), "stop-target-")), name);

  it("acts on what the start launched, not on the settings", async () => {
    const f = await file();
    await writeFile(f, JSON.stringify(record));
    expect(await readStopTarget(f, settings)).toEqual({
      target: {
        ...{ port: 4000, pidFile: "/r/agentapi.pid", stateFile: "/r/state.json", stateBackup: "/r/state.json.bak" },
        ...{ persistence: true, persistenceReason: why },
      },
      note: null,
    });
  });

  it("falls back to the settings with persistence unconfirmed when the start left no record", async () => {
    const { target, note } = await readStopTarget(await file("missing.json"), settings);
    expect(target).toEqual({ ...settings, stateBackup: null, persistence: false, persistenceReason: note });
    expect(note).toBe("the start script left no launch record, so persistence was never confirmed");
  });

  it("falls back when the record does not fit, naming the field", async () => {
    const f = await file();
    await writeFile(f, JSON.stringify({ ...record, port: "4000" }));
    const { target, note } = await readStopTarget(f, settings);
    expect(target.port).toBe(3284);
    expect(target.persistence).toBe(false);
    expect(note).toContain("launch record.port must be a whole number");
  });

  it("falls back when the record is not a file", async () => {
    const f = await file();
    await mkdir(f);
    const { target, note } = await readStopTarget(f, settings);
    expect(target.pidFile).toBe("/s/agentapi.pid");
    expect(note).toContain("cannot be read (EISDIR)");
  });
});

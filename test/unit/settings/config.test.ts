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

const HOME = "/home/u";
const MODULE_DIR = "/home/u/.coder-modules/coder/goose";

// Shaped like the documents modules/agentapi/main.tf renders.
function startDocument() {
  return {
    layer: {
      module_folder: ".coder-modules/coder/goose",
      port: 3284,
      chat_base_path: "/@a/w.1/apps/goose/chat",
      persistence: true,
      state_file: "",
      pid_file: "",
    },
    agent: {
      folder: "/home/u/project",
      supervise: false,
      agentapi: {
        install: true,
        version: "v9.9.9",
        download_url: "https://mirror.example/agentapi",
        sha256: { amd64: "a".repeat(64) },
      },
      goose: {
        install: true,
        version: "9.9.9",
        download_url: "https://mirror.example/goose",
        sha256: {},
        installer_url: "",
        provider: "anthropic",
        model: "m",
        prompt: "fix it",
        system_prompt: "",
        session_name: "coder-1",
        continue: true,
        continue_interrupted_turn: false,
        mode: "smart_approve",
        app_slug: "goose",
        extensions: { github: { type: "stdio", cmd: "gh-mcp" } },
        install_script: { pre: "", post: "echo hi" },
        ai_gateway: { enabled: false, base_url: "", token_env: "CODER_GOOSE_AI_GATEWAY_TOKEN" },
        command_prefix: [],
      },
      access: {
        allowed_hosts: ["proxy.example.com"],
        allowed_origins: [],
        access_url: "https://coder.example.com",
        subdomain: false,
      },
    },
  };
}

function stopDocument() {
  return {
    layer: {
      module_folder: ".coder-modules/coder/goose",
      port: 3284,
      state_file: "",
      pid_file: "",
      task: { enabled: true, id: "t-1" },
    },
    agent: { log_snapshot: false, timeouts: { turn_ms: 2000, term_ms: 20000 }, goose_mode: "approve" },
  };
}

/** A copy of `doc` with the value at `at` ("layer.port") replaced, or removed when `value` is undefined. */
function edited<T>(doc: T, at: string, value: unknown): T {
  const copy = structuredClone(doc) as Record<string, unknown>;
  const keys = at.split(".");
  const last = keys.pop() as string;
  const parent = keys.reduce((node, key) => node[key] as Record<string, unknown>, copy);
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy as T;
}

describe("parseStartConfig", () => {
  it("puts the state and PID files in the module folder when the template leaves them empty", () => {
    const config = parseStartConfig(startDocument(), HOME);
    expect(config.paths.stateFile).toBe(`${MODULE_DIR}/agentapi-state.json`);
    expect(config.paths.stateBackup).toBe(`${MODULE_DIR}/agentapi-state.json.bak`);
    expect(config.paths.pidFile).toBe(`${MODULE_DIR}/agentapi.pid`);
    expect(config.paths.launchRecord).toBe(`${MODULE_DIR}/agentapi-launch.json`);
    expect(config.paths.logs).toBe(`${MODULE_DIR}/logs`);
    expect(config.paths.supervisorPid).toBe(`${MODULE_DIR}/supervisor.pid`);
  });

  it("keeps the template's own paths", () => {
    let doc = edited(startDocument(), "layer.state_file", "/var/lib/goose/chat.json");
    doc = edited(doc, "layer.pid_file", "/run/goose.pid");
    const config = parseStartConfig(doc, HOME);
    expect(config.paths.stateFile).toBe("/var/lib/goose/chat.json");
    expect(config.paths.stateOwner).toBe("/var/lib/goose/chat.json.owner.json");
    expect(config.paths.pidFile).toBe("/run/goose.pid");
  });

  it("brings the layer's and the agent's settings together", () => {
    const config = parseStartConfig(startDocument(), HOME);
    expect(config.folder).toBe("/home/u/project");
    expect(config.supervise).toBe(false);
    expect(config.agentapi).toEqual({
      install: true,
      version: "v9.9.9",
      downloadUrl: "https://mirror.example/agentapi",
      sha256: { amd64: "a".repeat(64) },
      port: 3284,
      chatBasePath: "/@a/w.1/apps/goose/chat",
      persistence: true,
    });
    expect(config.goose.extensions.github).toEqual({ type: "stdio", cmd: "gh-mcp" });
    expect(config.goose.installScript).toEqual({ pre: "", post: "echo hi" });
    expect(config.goose.continueInterruptedTurn).toBe(false);
    expect(config.goose.mode).toBe("smart_approve");
    expect(config.access).toEqual({
      allowedHosts: ["proxy.example.com"],
      allowedOrigins: [],
      accessUrl: "https://coder.example.com",
      subdomain: false,
    });
    expect(config.goose.downloadUrl).toBe("https://mirror.example/goose");
    expect(config.goose.sha256).toEqual({});
    expect(config.goose.installerUrl).toBe("");
  });

  it.each([
    ["layer.port", "3284", 'settings.layer.port must be a whole number from 1 to 65535, but it is the string "3284"'],
    ["layer.port", 70000, "settings.layer.port must be a whole number from 1 to 65535, but it is number 70000"],
    ["layer.persistence", undefined, "settings.layer.persistence must be true or false, but it is missing"],
    ["agent.supervise", "yes", 'settings.agent.supervise must be true or false, but it is the string "yes"'],
    [
      "layer.state_file",
      "state.json",
      'settings.layer.state_file must be an absolute path or empty, but it is the string "state.json"',
    ],
    ["agent.goose.model", null, "settings.agent.goose.model must be a string, but it is null"],
    ["agent.goose", [], "settings.agent.goose must be an object, but it is an array"],
    [
      "agent.goose.extensions.github",
      "yes",
      'settings.agent.goose.extensions.github must be an object, but it is the string "yes"',
    ],
    ["agent.agentapi.sha256.arm64", 64, "settings.agent.agentapi.sha256.arm64 must be a string, but it is number 64"],
    ["agent.goose.sha256", "abc", 'settings.agent.goose.sha256 must be an object, but it is the string "abc"'],
    [
      "agent.goose.install_script.pre",
      1,
      "settings.agent.goose.install_script.pre must be a string, but it is number 1",
    ],
    [
      "agent.goose.mode",
      "yolo",
      'settings.agent.goose.mode must be one of auto, smart_approve, approve, chat, but it is the string "yolo"',
    ],
    [
      "agent.access.allowed_hosts",
      "localhost",
      'settings.agent.access.allowed_hosts must be a list of strings, but it is the string "localhost"',
    ],
    [
      "agent.access.allowed_origins",
      ["https://a.example", 1],
      "settings.agent.access.allowed_origins must be a list of strings, but it is an array",
    ],
    ["agent.access", undefined, "settings.agent.access must be an object, but it is missing"],
  ])("rejects %s = %j, naming the field", (at, value, message) => {
    expect(() => parseStartConfig(edited(startDocument(), at, value), HOME)).toThrow(message);
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
    expect(config.paths.pidFile).toBe(`${MODULE_DIR}/agentapi.pid`);
    expect(config.gooseMode).toBe("approve");
  });

  it.each([
    ["agent.goose_mode", "Auto", "settings.agent.goose_mode must be one of auto, smart_approve, approve, chat"],
    ["agent.timeouts.turn_ms", 300_001, "settings.agent.timeouts.turn_ms must be a whole number from 0 to 300000"],
    ["agent.timeouts.term_ms", 1.5, "settings.agent.timeouts.term_ms must be a whole number from 0 to 300000"],
    ["layer.task.id", undefined, "settings.layer.task.id must be a string, but it is missing"],
    ["agent.log_snapshot", "true", 'settings.agent.log_snapshot must be true or false, but it is the string "true"'],
  ])("rejects %s = %j, naming the field", (at, value, message) => {
    expect(() => parseStopConfig(edited(stopDocument(), at, value), HOME)).toThrow(message);
  });
});

describe("readSettingsDocument", () => {
  const encode = (value: unknown) => gzipSync(JSON.stringify(value)).toString("base64");

  it("decodes the document and removes it from the environment, so no child inherits the prompt", () => {
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SETTINGS: encode({ a: 1 }) };
    expect(readSettingsDocument(env)).toEqual({ a: 1 });
    expect(env).not.toHaveProperty("CODER_MODULE_SETTINGS");
  });

  it("also removes the script's own code, which only takeOwnScript reads", () => {
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SETTINGS: encode({ a: 1 }), CODER_MODULE_SCRIPT: "code" };
    readSettingsDocument(env);
    expect(env).not.toHaveProperty("CODER_MODULE_SCRIPT");
  });

  it("names the variable when it is missing", () => {
    expect(() => readSettingsDocument({})).toThrow("no settings given (CODER_MODULE_SETTINGS is not set)");
  });

  it("says to re-apply the template when the value is not gzip+base64 JSON", () => {
    expect(() => readSettingsDocument({ CODER_MODULE_SETTINGS: "bm90IGd6aXA=" })).toThrow(
      /cannot read the module settings: .*Re-apply the template/,
    );
  });
});

describe("takeOwnScript", () => {
  it("decodes the script's code and removes it from the environment", () => {
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SCRIPT: gzipSync("console.log(1)").toString("base64") };
    expect(takeOwnScript(env)?.toString("utf8")).toBe("console.log(1)");
    expect(env).not.toHaveProperty("CODER_MODULE_SCRIPT");
  });

  it("null when the wrapper passed none, or something that is not gzip+base64", () => {
    expect(takeOwnScript({})).toBeNull();
    expect(takeOwnScript({ CODER_MODULE_SCRIPT: "bm90IGd6aXA=" })).toBeNull();
  });
});

describe("readStopTarget", () => {
  const settings = { port: 3284, pidFile: "/s/agentapi.pid", stateFile: "/s/state.json" };
  const record = {
    persistence: true,
    persistence_reason: "agentapi 0.12.2 >= 0.12.0",
    agentapi_binary: "/b/agentapi",
    agentapi_version: "0.12.2",
    port: 4000,
    state_file: "/r/state.json",
    state_backup: "/r/state.json.bak",
    pid_file: "/r/agentapi.pid",
    session_name: "s",
    mode: "warm",
    interrupted_turn: { action: "none", reason: "" },
    started_at: "2026-11-22T10:00:00.000Z",
  };
  const folder = () => mkdtemp(path.join(tmpdir(), "stop-target-"));

  it("acts on what the start launched, not on the settings", async () => {
    const file = path.join(await folder(), "agentapi-launch.json");
    await writeFile(file, JSON.stringify(record));
    expect(await readStopTarget(file, settings)).toEqual({
      target: {
        port: 4000,
        pidFile: "/r/agentapi.pid",
        stateFile: "/r/state.json",
        stateBackup: "/r/state.json.bak",
        persistence: true,
        persistenceReason: record.persistence_reason,
      },
      note: null,
    });
  });

  it("falls back to the settings with persistence unconfirmed when the start left no record", async () => {
    const { target, note } = await readStopTarget(path.join(await folder(), "missing.json"), settings);
    expect(target).toEqual({ ...settings, stateBackup: null, persistence: false, persistenceReason: note });
    expect(note).toBe("the start script left no launch record, so persistence was never confirmed");
  });

  it("falls back when the record does not fit, naming the field", async () => {
    const file = path.join(await folder(), "agentapi-launch.json");
    await writeFile(file, JSON.stringify({ ...record, port: "4000" }));
    const { target, note } = await readStopTarget(file, settings);
    expect(target.port).toBe(3284);
    expect(target.persistence).toBe(false);
    expect(note).toContain("launch record.port must be a whole number");
  });

  it("falls back when the record is not a file", async () => {
    const file = path.join(await folder(), "agentapi-launch.json");
    await mkdir(file);
    const { target, note } = await readStopTarget(file, settings);
    expect(target.pidFile).toBe("/s/agentapi.pid");
    expect(note).toContain("cannot be read (EISDIR)");
  });
});

import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseStartConfig, parseStopConfig, takeScriptInputs } from "../../../src/settings/config.js";
import { CODER, edited, HOME, startDocument, stopDocument, URL_G } from "./documents.js";

const DIR = "/home/u/.coder-modules/coder/goose";

describe("parseStartConfig", () => {
  it("puts the state and PID files in the module folder when the template leaves them empty", () => {
    expect(parseStartConfig(startDocument(), HOME).paths).toMatchObject({
      stateFile: `${DIR}/agentapi-state.json`,
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
      pidFile: "/run/g.pid",
    });
  });

  it("brings the layer's and the agent's settings together", () => {
    const config = parseStartConfig(startDocument(), HOME);
    expect(config).toMatchObject({ folder: "/home/u/project", supervise: false });
    const layer = { port: 3284, chatBasePath: "/@a/w.1/apps/goose/chat", persistence: true };
    const agentapi = { install: true, version: "v9.9.9", downloadUrl: "https://mirror.example/agentapi" };
    expect(config.agentapi).toEqual({ ...agentapi, sha256: { amd64: "a".repeat(64) }, ...layer });
    const { extensions, installScript, sha256, ...goose } = config.goose;
    expect(goose).toMatchObject({
      continueInterruptedTurn: false,
      mode: "smart_approve",
      installerUrl: "",
      downloadUrl: URL_G,
    });
    expect([extensions.github, installScript, sha256]).toEqual([
      { type: "stdio", cmd: "gh-mcp" },
      { pre: "", post: "echo hi" },
      {},
    ]);
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
    const { port, task, bounds, paths, gooseMode } = parseStopConfig(stopDocument(), HOME);
    expect([port, gooseMode, paths.pidFile]).toEqual([3284, "approve", `${DIR}/agentapi.pid`]);
    expect([task, bounds]).toEqual([
      { enabled: true, id: "t-1", logSnapshot: false },
      { turnMs: 2000, termMs: 20000 },
    ]);
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

describe("takeScriptInputs", () => {
  it("decodes the document and the script's code and removes both from the environment, so no child gets them", () => {
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SETTINGS: gz('{"a":1}'), CODER_MODULE_SCRIPT: gz("code"), X: "" };
    const { settings, ownScript } = takeScriptInputs(env, ["-e", "the loader"]);
    expect(settings).toEqual({ a: 1 });
    const own = ownScript();
    expect(gunzipSync(Buffer.from(own?.code ?? "", "base64")).toString("utf8")).toBe("code");
    expect(own?.loader).toBe("the loader");
    expect(env).toEqual({ X: "" });
  });

  it("names the variable when it is missing, and says to re-apply the template when it is not gzip+base64 JSON", () => {
    expect(() => takeScriptInputs({})).toThrow("no settings given (CODER_MODULE_SETTINGS is not set)");
    expect(() => takeScriptInputs({ CODER_MODULE_SETTINGS: NOT_GZIP })).toThrow(
      /cannot read the module settings: .*Re-apply the template/,
    );
  });

  it("gives no script when none or no gzip+base64 was passed, or the runtime got no loader, and removes it all the same", () => {
    const settings = gz("{}");
    const loader = ["-e", "the loader"];
    expect(takeScriptInputs({ CODER_MODULE_SETTINGS: settings }, loader).ownScript()).toBeNull();
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SETTINGS: settings, CODER_MODULE_SCRIPT: NOT_GZIP };
    expect(takeScriptInputs(env, loader).ownScript()).toBeNull();
    expect(env).toEqual({});
    const piped = { CODER_MODULE_SETTINGS: settings, CODER_MODULE_SCRIPT: gz("code") };
    expect(takeScriptInputs(piped, ["--input-type=module"]).ownScript()).toBeNull();
  });

  it("takes the agent run the start waits for, and none that is not <pid>.<start time>", () => {
    const settings = gz("{}");
    const env: NodeJS.ProcessEnv = { CODER_MODULE_SETTINGS: settings, CODER_MODULE_RUN: "812.4471" };
    expect(takeScriptInputs(env).run).toBe("812.4471");
    expect(env).toEqual({});
    // The wrapper gives "<pid>." where /proc could not be read.
    expect(takeScriptInputs({ CODER_MODULE_SETTINGS: settings, CODER_MODULE_RUN: "812." }).run).toBe("812.");
    for (const run of ["", "812", "812.4471 done 0", "$(id).1"])
      expect(takeScriptInputs({ CODER_MODULE_SETTINGS: settings, CODER_MODULE_RUN: run }).run).toBeNull();
  });
});

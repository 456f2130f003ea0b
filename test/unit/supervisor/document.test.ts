import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseStartConfig } from "../../../src/settings/config.js";
import { readSupervisorDocument, supervisorDocument } from "../../../src/supervisor/document.js";
import { edited, startDocument } from "../settings/documents.js";

const tools = { agentapi: "/m/bin/agentapi", gooseBin: "/m/bin/goose", pathPrefix: ["/m/bin"] };
const gate = { kind: "decided" as const, enabled: true, version: "0.12.2", reason: "agentapi 0.12.2 >= 0.12.0" };
const start = { since: 1_764_000_000_000, stops: 3 };
const env = (document: unknown) => ({
  CODER_MODULE_SETTINGS: gzipSync(JSON.stringify(document)).toString("base64"),
});

describe("the supervisor's document", () => {
  it("carries the start's settings without the prompt, read back by the start's own reader, ready for a restart", () => {
    const settings = startDocument();
    const document = supervisorDocument(settings, tools, { ...gate, warning: "w" }, start);
    expect(JSON.stringify(document)).not.toContain('"fix it"');
    const read = readSupervisorDocument(env(document));
    const config = parseStartConfig(settings, process.env.HOME as string);
    expect(read).toEqual({
      config: {
        ...config,
        goose: { ...config.goose, prompt: "", continue: true, installScript: { pre: "", post: "" } },
      },
      tools,
      gate,
      ...start,
    });
  });

  it.each([
    ["gate.enabled", "yes", "supervisor document.gate.enabled must be true or false"],
    ["tools.gooseBin", "goose", "supervisor document.tools.gooseBin must be an absolute path"],
    ["stops", -1, "supervisor document.stops must be a whole number"],
    ["settings.layer.port", "3284", "settings.layer.port must be a whole number"],
  ])("refuses a document whose %s is %j, naming the field", (at, value, message) => {
    const document = edited(supervisorDocument(startDocument(), tools, gate, start), at, value);
    expect(() => readSupervisorDocument(env(document))).toThrow(message);
  });

  it("refuses what is not a supervisor's document", () => {
    expect(() => readSupervisorDocument(env(startDocument()))).toThrow("only the start script starts it");
  });
});

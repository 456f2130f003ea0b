import { describe, expect, it } from "vitest";
import { upsertHintsBlock } from "../../../src/goose/goose-config.js";
import {
  describeMovedEntries,
  hintsHoldOnlyPrompt,
  isPredecessorFolder,
  matchPredecessorConfig,
  staleEntriesInChangedConfig,
} from "../../../src/predecessor/config-files.js";
import {
  DESKTOP_COMMANDER,
  predecessorConfigYaml,
  predecessorHints,
  README_SYSTEM_PROMPT,
} from "../../../support/workspace/predecessor-home.js";

const base = { provider: "anthropic", model: "claude-3-5-sonnet-latest" };
const withDesktop = predecessorConfigYaml({ ...base, additionalExtensions: DESKTOP_COMMANDER });
const QUOTED = `"my ext":\n  cmd: 'it''s'\n  description: "a \\"quoted\\" ünïcødé 🚀 text: yes"\n  enabled: true\n  type: stdio\n`;
const view = (names: string[], port = 3284, appSlug = "goose") => ({ port, appSlug, names });

describe("matchPredecessorConfig", () => {
  it.each([
    ["3.0.1 without additional extensions", predecessorConfigYaml(base), ["coder", "developer"]],
    ["with 3.0.1's README extension", withDesktop, ["coder", "developer", "desktop-commander"]],
    [
      "with two extensions, one quoted, and a blank line between",
      predecessorConfigYaml({ ...base, additionalExtensions: `${QUOTED}\nother:\n  cmd: x\n  enabled: true\n` }),
      ["coder", "developer", "my ext", "other"],
    ],
    [
      "an empty provider and model (3.x's defaults)",
      predecessorConfigYaml({ provider: "", model: "" }),
      ["coder", "developer"],
    ],
    [
      "provider and model with quotes and unicode",
      predecessorConfigYaml({ provider: `"open'ai"`, model: "modèle: 🚀 # not a comment" }),
      ["coder", "developer"],
    ],
  ])("recognises %s", (_, text, extensions) => {
    const found = matchPredecessorConfig(text);
    expect(found?.extensions).toEqual(extensions);
    const [provider, model] = text.split("\n");
    expect(found?.providerLines).toBe(`${provider}\n${model}\n`);
  });

  it.each([
    ["empty", ""],
    ["a user's own config", "GOOSE_PROVIDER: openai\nGOOSE_MODEL: gpt-4o\n"],
    ["a user comment added at the end", `${withDesktop}# mine\n`],
    ["a user comment added inside", withDesktop.replace("    cmd: coder\n", "    cmd: coder # pinned\n")],
    ["a key Goose appended", `${withDesktop}GOOSE_TELEMETRY_ENABLED: false\n`],
    ["the port changed by hand", withDesktop.replace("localhost:3284", "localhost:3290")],
    ["no final newline", withDesktop.slice(0, -1)],
    ["an extra blank line at the end", `${withDesktop}\n`],
    ["CRLF line endings", withDesktop.replace(/\n/g, "\r\n")],
    ["a provider line split over two lines", withDesktop.replace("anthropic", "anth\nropic")],
    [
      "fields reordered",
      withDesktop.replace("    name: Coder\n    timeout: 3000\n", "    timeout: 3000\n    name: Coder\n"),
    ],
    ["an extension appended at the top level", `${withDesktop}mine:\n  cmd: x\n`],
    ["the developer block removed", withDesktop.replace(/ {2}developer:\n(?: {4}.*\n)+/, "")],
  ])("refuses %s", (_, text) => {
    expect(matchPredecessorConfig(text)).toBeNull();
  });
});

describe("describeMovedEntries", () => {
  it("says why each entry mattered", () => {
    const found = matchPredecessorConfig(withDesktop);
    if (found === null) throw new Error("not recognised");
    expect(describeMovedEntries(found, view(["coder", "developer"], 3290))).toEqual([
      ["coder", "pointed at :3284, not agentapi_port 3290"],
      ["developer", "the module's config layer gives Goose this entry now"],
      ["desktop-commander", "the template no longer lists it"],
    ]);
    expect(describeMovedEntries(found, view(["coder", "developer", "desktop-commander"], 3284, "goose-web"))).toEqual([
      ["coder", `reporting to app "goose", not "goose-web"`],
      ["developer", "the module's config layer gives Goose this entry now"],
      ["desktop-commander", "the module's config layer gives Goose this entry now"],
    ]);
  });
});

describe("staleEntriesInChangedConfig", () => {
  const changed = `${withDesktop}GOOSE_TELEMETRY_ENABLED: false\n`;
  it.each([
    [
      "a moved port and a dropped extension",
      changed,
      view(["coder", "developer"], 3290),
      [
        ["coder", "pointed at :3284, not agentapi_port 3290"],
        ["desktop-commander", "the template no longer lists it"],
      ],
    ],
    ["nothing stale", changed, view(["coder", "developer", "desktop-commander"]), []],
    ["a user's own file", "GOOSE_PROVIDER: x\nextensions:\n  mine:\n    cmd: y\n", view(["coder"], 3290), []],
    ["3.x's block with the port fixed by the user", changed.replace(":3284", ":3290"), view(["coder"], 3290), []],
    [
      "3.x's block followed by a user's top-level key and extension elsewhere",
      `${predecessorConfigYaml(base)}# my things\nGOOSE_MODE: auto\n`,
      view(["coder", "developer"], 3290),
      [["coder", "pointed at :3284, not agentapi_port 3290"]],
    ],
  ] as const)("%s", (_, text, v, stale) => {
    expect(staleEntriesInChangedConfig(text, v)).toEqual(stale);
  });
});

describe("hintsHoldOnlyPrompt", () => {
  const block = (prompt: string) => upsertHintsBlock(null, prompt);
  it.each([
    [
      "3.x's file, the prompt from GOOSE_SYSTEM_PROMPT",
      predecessorHints(README_SYSTEM_PROMPT),
      [README_SYSTEM_PROMPT, "New."],
      true,
    ],
    [
      "3.x's file, the same text now in system_prompt",
      predecessorHints(README_SYSTEM_PROMPT),
      [undefined, README_SYSTEM_PROMPT],
      true,
    ],
    [
      "3.x's text beside the block an earlier start added",
      upsertHintsBlock(predecessorHints(README_SYSTEM_PROMPT), "New."),
      [README_SYSTEM_PROMPT, "New."],
      true,
    ],
    ["the module's block alone", block("New."), [README_SYSTEM_PROMPT, "New."], false],
    ["a user's hints", "Use tabs.\n", [README_SYSTEM_PROMPT, "New."], false],
    [
      "the prompt with a user comment added",
      `${predecessorHints(README_SYSTEM_PROMPT)}# mine\n`,
      [README_SYSTEM_PROMPT],
      false,
    ],
    ["an old prompt that differs", predecessorHints("Old text 'quoted' ü\n"), [README_SYSTEM_PROMPT, "New."], false],
    ["no candidates", predecessorHints(README_SYSTEM_PROMPT), [undefined, ""], false],
    ["an empty file", "", ["", "x"], false],
  ] as const)("%s", (_, text, prompts, expected) => {
    expect(hintsHoldOnlyPrompt(text, [...prompts])).toBe(expected);
  });
});

describe("isPredecessorFolder", () => {
  const f = (name: string) => ({ name, kind: "file" as const });
  const full = [
    f("install.sh"),
    f("install.log"),
    f("agentapi-start.log"),
    { name: "scripts", kind: "folder" as const },
    f("scripts/agentapi-start.sh"),
    f("scripts/agentapi-wait-for-start.sh"),
  ];
  it.each([
    ["3.x's files", full, true],
    [
      "with prompt.txt and the install scripts' files",
      [...full, f("prompt.txt"), f("pre_install.sh"), f("pre_install.log")],
      true,
    ],
    ["with a file of the user's", [...full, f("notes.md")], false],
    ["with prompt.txt as a folder", [...full, { name: "prompt.txt", kind: "folder" as const }], false],
    ["with a symbolic link", [...full, { name: "install.log", kind: "other" as const }], false],
    ["without install.sh", full.filter((e) => e.name !== "install.sh"), false],
    ["empty", [], false],
  ])("%s", (_, entries, expected) => {
    expect(isPredecessorFolder(entries)).toBe(expected);
  });
});

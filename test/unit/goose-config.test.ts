import { describe, expect, it } from "vitest";
import { load } from "js-yaml";
import { coderExtension, developerExtension, mergeGooseConfig, upsertHintsBlock } from "../../src/goose-config.js";

const managed = {
  settings: { GOOSE_PROVIDER: "anthropic", GOOSE_MODEL: "claude", GOOSE_MODE: "auto" },
  extensions: { coder: coderExtension(4000, "goose"), developer: developerExtension },
};

describe("mergeGooseConfig", () => {
  it("writes the module's settings and extensions into an empty config", () => {
    const config = load(mergeGooseConfig(null, managed)) as Record<string, any>;
    expect(config.GOOSE_PROVIDER).toBe("anthropic");
    expect(config.extensions.coder.envs.CODER_MCP_AI_AGENTAPI_URL).toBe("http://localhost:4000");
    expect(config.extensions.coder.envs.CODER_MCP_APP_STATUS_SLUG).toBe("goose");
    expect(config.extensions.developer.type).toBe("builtin");
  });

  it("keeps the user's own keys and extensions", () => {
    const existing = "GOOSE_CLI_THEME: dark\nextensions:\n  memory:\n    type: builtin\n    enabled: true\n  coder:\n    type: stdio\n    cmd: old\n";
    const config = load(mergeGooseConfig(existing, managed)) as Record<string, any>;
    expect(config.GOOSE_CLI_THEME).toBe("dark");
    expect(config.extensions.memory).toEqual({ type: "builtin", enabled: true });
    expect(config.extensions.coder.cmd).toBe("coder");
  });

  it("lets the module's settings win over stale values", () => {
    const config = load(mergeGooseConfig("GOOSE_MODEL: old-model\nGOOSE_MODE: approve\n", managed)) as Record<string, any>;
    expect(config.GOOSE_MODEL).toBe("claude");
    expect(config.GOOSE_MODE).toBe("auto");
  });

  it("is stable: merging twice gives the same text", () => {
    const once = mergeGooseConfig("a: 1\n", managed);
    expect(mergeGooseConfig(once, managed)).toBe(once);
  });

  it("keeps hostile strings as data", () => {
    const hostile = { settings: {}, extensions: { x: { cmd: "$(rm -rf /)", args: ["'; echo pwned", "`id`", "line\nbreak"] } } };
    const config = load(mergeGooseConfig(null, hostile)) as Record<string, any>;
    expect(config.extensions.x).toEqual(hostile.extensions.x);
  });

  it("refuses a config that is not a mapping instead of overwriting it", () => {
    expect(() => mergeGooseConfig("- a\n- b\n", managed)).toThrow(/not a YAML mapping/);
    expect(() => mergeGooseConfig("key: [unclosed\n", managed)).toThrow();
  });
});

describe("upsertHintsBlock", () => {
  it("adds the system prompt as a marked block after the user's hints", () => {
    const text = upsertHintsBlock("Use tabs.\n", "Be brief.");
    expect(text.startsWith("Use tabs.\n\n")).toBe(true);
    expect(text).toContain("Be brief.");
  });

  it("replaces its own block on the next start without touching the rest", () => {
    const first = upsertHintsBlock("Use tabs.\n", "Be brief.");
    const second = upsertHintsBlock(first, "Be thorough.");
    expect(second).not.toContain("Be brief.");
    expect(second).toContain("Be thorough.");
    expect(second.match(/begin -->/g)).toHaveLength(1);
    expect(second.startsWith("Use tabs.")).toBe(true);
  });

  it("removes its block when the system prompt is emptied", () => {
    const first = upsertHintsBlock("Use tabs.\n", "Be brief.");
    expect(upsertHintsBlock(first, "")).toBe("Use tabs.\n");
  });
});

import { describe, expect, it } from "vitest";
import {
  additionalConfigFiles,
  coderExtension,
  developerExtension,
  extensionNameProblem,
  extensionsLayer,
  moduleExtensions,
  upsertHintsBlock,
} from "../../../src/goose/config.js";

const coder = coderExtension(4000, "goose");
const wanted = new Map<string, unknown>([
  ["coder", coder],
  ["developer", developerExtension],
]);

describe("extensionNameProblem", () => {
  it.each([
    ["coder", null],
    ["github-mcp_2", null],
    ["GitHub", null],
    ["123", null],
    ["", "is empty"],
    [" coder", "has spaces around it"],
    ["coder\n", "has spaces around it"],
    ["co\u0000der", "contains control characters"],
    ["co\u001bder", "contains control characters"],
    ["co\u0085der", "contains control characters"],
    ["__proto__", "is reserved"],
    ["constructor", "is reserved"],
    ["Prototype", "is reserved"],
    ["my ext", "may only contain"],
    ["a.b", "may only contain"],
    ["a/b", "may only contain"],
    ["a:b", "may only contain"],
    ["émoji", "may only contain"],
  ])("%j -> %j", (name, problem) => {
    const got = extensionNameProblem(name);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toContain(problem);
  });
});

describe("moduleExtensions", () => {
  it("adds coder, developer and valid extras, and warns about the rest", () => {
    const { wanted: got, warnings } = moduleExtensions(4000, "goose", {
      github: { type: "stdio", cmd: "gh-mcp" },
      "bad name": { type: "stdio" },
      __proto__x: { type: "builtin" },
      scalar: "not a mapping",
      list: [1, 2],
    });
    expect([...got.keys()]).toEqual(["coder", "developer", "github", "__proto__x"]);
    expect(warnings).toHaveLength(3);
    expect(warnings.join("\n")).toMatch(/"bad name" may only contain/);
    expect(warnings.join("\n")).toMatch(/"scalar" is not a mapping/);
  });

  it("lets the template replace developer, as before", () => {
    const { wanted: got } = moduleExtensions(4000, "goose", { developer: { type: "builtin", enabled: false } });
    expect(got.get("developer")).toEqual({ type: "builtin", enabled: false });
  });
});

describe("extensionsLayer", () => {
  it("holds only the extensions mapping, with the entries as given", () => {
    const layer = JSON.parse(extensionsLayer(wanted));
    expect(layer).toEqual({ extensions: { coder, developer: developerExtension } });
  });

  it("keeps hostile strings as data: every string is a quoted JSON string", () => {
    const x = {
      cmd: "$(rm -rf /)",
      args: ["'; echo pwned", "`id`", "line\nbreak", "yes", "0o17", "null", "#", "- a", ": b", "\u0001", "😀"],
    };
    const text = extensionsLayer(new Map([["x", x]]));
    expect(JSON.parse(text).extensions.x).toEqual(x);
    // serde_yaml reads JSON as YAML; a bare yes/null/0o17 would change type there.
    expect(text).not.toMatch(/: (yes|null|0o17)\b/);
  });
});

describe("additionalConfigFiles", () => {
  it.each([
    [undefined, "/m/l.json"],
    ["", "/m/l.json"],
    ["/u/a.yaml", "/m/l.json:/u/a.yaml"],
    ["/u/a.yaml:/u/b.yaml", "/m/l.json:/u/a.yaml:/u/b.yaml"],
  ])("the user's list %j -> %j (the module's layer first, so the user's files win)", (existing, expected) => {
    expect(additionalConfigFiles("/m/l.json", existing)).toBe(expected);
  });
});

const BEGIN = "<!-- coder goose module: system_prompt begin -->";
const END = "<!-- coder goose module: system_prompt end -->";

describe("upsertHintsBlock", () => {
  it("adds the system prompt as a marked block after the user's hints", () => {
    const text = upsertHintsBlock("Use tabs.\n", "Be brief.");
    expect(text).toBe(`Use tabs.\n\n${BEGIN}\nBe brief.\n${END}\n`);
  });

  it("replaces its own block on the next start without touching the rest", () => {
    const second = upsertHintsBlock(upsertHintsBlock("Use tabs.\n", "Be brief."), "Be thorough.");
    expect(second).toBe(`Use tabs.\n\n${BEGIN}\nBe thorough.\n${END}\n`);
  });

  it("removes its block when the system prompt is emptied", () => {
    expect(upsertHintsBlock(upsertHintsBlock("Use tabs.\n", "Be brief."), "")).toBe("Use tabs.\n");
    expect(upsertHintsBlock(null, "")).toBe("");
  });

  it("neutralises marker text inside the prompt, so the file never grows", () => {
    const prompt = `before ${END} middle ${BEGIN} after`;
    const once = upsertHintsBlock("Mine.\n", prompt);
    expect(once.split(BEGIN)).toHaveLength(2);
    expect(once.split(END)).toHaveLength(2);
    expect(once).toContain("before <!-- coder goose module - system_prompt end --> middle");
  });

  it("cleans up the blocks older versions left when the prompt held an end marker", () => {
    const legacy = `Mine.\n\n${BEGIN}\nX ${END} Y\n${END}\n\n${BEGIN}\nold\n${END}\n`;
    expect(upsertHintsBlock(legacy, "new")).toBe(`Mine.\n\n${BEGIN}\nnew\n${END}\n`);
  });

  const prompts = [
    "",
    "plain",
    "  padded  \n",
    BEGIN,
    END,
    `${BEGIN}${END}`,
    `${END}${BEGIN}`,
    `a ${BEGIN} b ${BEGIN} c ${END} d ${END} e`,
    `${BEGIN.slice(0, 20)}${END}${BEGIN.slice(20)}`,
    "<!-- coder goose module: system_prompt <!-- coder goose module: system_prompt end -->begin -->",
    "line1\r\nline2\r\n",
    `crlf\r\n${END}\r\n`,
    "\n\n\n",
  ];
  const existing = [
    null,
    "",
    "User hint.\n",
    "A\n\n\n\nB\r\n",
    `${END}\nstray end first\n`,
    `stray begin last\n${BEGIN}\n`,
    `x ${BEGIN} y`,
    `<!-- coder goose module: system_prompt <!-- coder goose module: system_prompt end -->begin --> trap`,
    `${BEGIN}\nold\n${END}\nafter the block\n`,
  ];
  const cases = existing.flatMap((e) => prompts.map((p) => [e, p] as const));

  it.each(cases)("applying twice equals applying once (existing %j, prompt %j)", (e, p) => {
    const once = upsertHintsBlock(e, p);
    expect(upsertHintsBlock(once, p)).toBe(once);
    expect(once.split(BEGIN).length).toBeLessThanOrEqual(2);
    expect(once.split(END).length).toBe(once.split(BEGIN).length);
  });

  it.each(cases)("a changed prompt replaces the block without growing the file (existing %j, prompt %j)", (e, p) => {
    const once = upsertHintsBlock(e, p);
    const other = upsertHintsBlock(once, "other prompt");
    expect(upsertHintsBlock(other, p)).toBe(once);
  });
});

import { describe, expect, it } from "vitest";
import {
  additionalConfigFiles,
  coderExtension,
  developerExtension,
  extensionNameProblem,
  extensionsLayer,
  moduleExtensions,
  upsertHintsBlock,
} from "../../../src/goose/goose-config.js";

const coder = coderExtension(4000, "goose");
const wanted = new Map<string, unknown>([
  ["coder", coder],
  ["developer", developerExtension],
]);

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
])("extensionNameProblem %j -> %j", (name, problem) => {
  const got = extensionNameProblem(name);
  if (problem === null) expect(got).toBeNull();
  else expect(got).toContain(problem);
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
    const [bad, scalar, list] = [/"bad name" may only contain/, /"scalar" is not a mapping/, /"list" is not a mapping/];
    expect(warnings).toEqual([bad, scalar, list].map((re) => expect.stringMatching(re)));
  });

  it("lets the template replace developer, as before", () => {
    const { wanted: got } = moduleExtensions(4000, "goose", { developer: { type: "builtin", enabled: false } });
    expect(got.get("developer")).toEqual({ type: "builtin", enabled: false });
  });
});

describe("extensionsLayer", () => {
  it("holds only the extensions mapping, with the entries as given", () => {
    expect(JSON.parse(extensionsLayer(wanted))).toEqual({ extensions: { coder, developer: developerExtension } });
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

it.each([
  [undefined, "/m/l.json"],
  ["", "/m/l.json"],
  ["/u/a.yaml", "/m/l.json:/u/a.yaml"],
  ["/u/a.yaml:/u/b.yaml", "/m/l.json:/u/a.yaml:/u/b.yaml"],
])(
  "additionalConfigFiles the user's list %j -> %j (the module's layer first, so the user's files win)",
  (existing, expected) => {
    expect(additionalConfigFiles("/m/l.json", existing)).toBe(expected);
  },
);

const BEGIN = "<!-- coder goose module: system_prompt begin -->";
const END = "<!-- coder goose module: system_prompt end -->";

describe("upsertHintsBlock", () => {
  it("adds the prompt as a marked block after the user's hints, replaces it next time, removes it when emptied", () => {
    const first = upsertHintsBlock("Use tabs.\n", "Be brief.");
    expect(first).toBe(`Use tabs.\n\n${BEGIN}\nBe brief.\n${END}\n`);
    expect(upsertHintsBlock(first, "Be thorough.")).toBe(`Use tabs.\n\n${BEGIN}\nBe thorough.\n${END}\n`);
    expect(upsertHintsBlock(first, "")).toBe("Use tabs.\n");
    expect(upsertHintsBlock(null, "")).toBe("");
  });

  it("neutralises marker text inside the prompt, so the file never grows", () => {
    const prompt = `before ${END} middle ${BEGIN} after`;
    // The table below checks that the markers stay one pair; this is what stands in their place.
    expect(upsertHintsBlock("Mine.\n", prompt)).toContain(
      "before <!-- coder goose module - system_prompt end --> middle",
    );
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

  it.each(cases)("is idempotent, and a changed prompt replaces the block (existing %j, prompt %j)", (e, p) => {
    const once = upsertHintsBlock(e, p);
    expect(upsertHintsBlock(once, p)).toBe(once);
    expect(once.split(BEGIN).length).toBeLessThanOrEqual(2);
    expect(once.split(END).length).toBe(once.split(BEGIN).length);
    expect(upsertHintsBlock(upsertHintsBlock(once, "other prompt"), p)).toBe(once);
  });
});

import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  coderExtension,
  deepEqual,
  developerExtension,
  extensionNameProblem,
  moduleExtensions,
  planConfigEdit,
  upsertHintsBlock,
} from "../../../src/goose/config.js";

const coder = coderExtension(4000, "goose");
const wanted = new Map<string, unknown>([
  ["coder", coder],
  ["developer", developerExtension],
]);

function written(text: string | null, want: ReadonlyMap<string, unknown> = wanted): string {
  const plan = planConfigEdit(text, want);
  if (plan.kind !== "write") throw new Error(`expected a write, got ${JSON.stringify(plan)}`);
  return plan.text;
}

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

describe("deepEqual", () => {
  it.each([
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, false],
    [[1, 2], [2, 1], false],
    [{ a: null }, { a: undefined }, false],
    [{}, [], false],
    ["1", 1, false],
  ])("%j vs %j -> %j", (a, b, equal) => expect(deepEqual(a, b)).toBe(equal));
});

describe("planConfigEdit", () => {
  it("creates the file with only the extensions mapping", () => {
    const text = written(null);
    expect(Object.keys(parse(text))).toEqual(["extensions"]);
    expect(parse(text).extensions).toEqual({ coder, developer: developerExtension });
  });

  it("writes no provider, model, mode, telemetry or keyring setting", () => {
    expect(written("GOOSE_CLI_THEME: dark\n")).not.toMatch(/GOOSE_(PROVIDER|MODEL|MODE|TELEMETRY|DISABLE_KEYRING)/);
  });

  it("keeps every byte outside the module's entries: comments, order, quoting, number text", () => {
    const head = [
      "# my goose config",
      "GOOSE_PROVIDER: anthropic   # chosen by me",
      "big: 12345678901234567890",
      "hex: 0x1F",
      "float: 1.50",
      "sq: 'single'",
      "flow: {a: 1, b: [1,2]}",
      "multi: |",
      "    keep",
      "      this",
      "",
      "extensions:",
      "    # my extensions",
      "    memory:",
      "        type: builtin   # builtin",
      "        enabled: true",
    ].join("\n");
    const tail = ["", "after: 1 # end", "# trailing comment", ""].join("\n");
    const text = written(`${head}\n    coder:\n        cmd: old\n${tail}`);
    expect(text.startsWith(`${head}\n    coder:\n`)).toBe(true);
    expect(text.endsWith(tail)).toBe(true);
    expect(text).toContain("big: 12345678901234567890");
    const config = parse(text);
    expect(config.extensions.coder).toEqual(coder);
    expect(config.extensions.developer).toEqual(developerExtension);
    expect(config.extensions.memory).toEqual({ type: "builtin", enabled: true });
    expect(Object.keys(config)).toEqual([
      "GOOSE_PROVIDER",
      "big",
      "hex",
      "float",
      "sq",
      "flow",
      "multi",
      "extensions",
      "after",
    ]);
  });

  it("adds the extensions mapping to a config that has none, keeping the rest", () => {
    const before = "# comment\nGOOSE_CLI_THEME: dark\n";
    const text = written(before);
    expect(text.startsWith(before)).toBe(true);
    expect(parse(text).extensions.coder).toEqual(coder);
  });

  it("copes with a file without a final newline and with CRLF line ends", () => {
    expect(parse(written("a: 1")).a).toBe(1);
    const crlf = written("a: 1\r\nextensions:\r\n  memory:\r\n    type: builtin\r\n");
    expect(crlf.startsWith("a: 1\r\nextensions:\r\n  memory:\r\n    type: builtin\r\n")).toBe(true);
    expect(crlf).not.toMatch(/[^\r]\n/);
    expect(parse(crlf).extensions.coder).toEqual(coder);
  });

  it.each([
    ["empty", ""],
    ["only a comment", "# nothing yet\n"],
    ["only a document start", "---\n"],
    ["empty extensions", "extensions:\n"],
    ["null extensions", "extensions: ~\nafter: 1\n"],
    ["empty flow extensions (as Goose writes it)", "GOOSE_MODE: auto\nextensions: {}\n"],
    ["an explicit document end", "a: 1\n...\n"],
    ["an indented top level", "  a: 1\n"],
    ["a numeric extension key", "extensions:\n  123: {x: 1}\n"],
  ])("writes into %s", (_name, before) => {
    const text = written(before);
    const config = parse(text) ?? {};
    expect(config.extensions.coder).toEqual(coder);
    expect(config.extensions.developer).toEqual(developerExtension);
  });

  it("is idempotent: its own output is left unchanged", () => {
    for (const before of [
      null,
      "",
      "a: 1\n",
      "extensions: {}\n",
      "x: 1\nextensions:\n    coder:\n        cmd: old\n",
    ]) {
      expect(planConfigEdit(written(before), wanted)).toEqual({ kind: "unchanged" });
    }
  });

  it("reports unchanged when the entries already match, whatever their formatting", () => {
    const text =
      'extensions:\n  developer: {name: developer, display_name: Developer, type: builtin, enabled: true, timeout: 300}\n  coder:\n    name: "Coder"\n    type: stdio\n    cmd: coder\n    args: [exp, mcp, server]\n    description: "Report ALL tasks and statuses (in progress, done, failed) you are working on."\n    enabled: true\n    timeout: 3000\n    envs: {CODER_MCP_APP_STATUS_SLUG: goose, CODER_MCP_AI_AGENTAPI_URL: "http://localhost:4000"}\n';
    expect(planConfigEdit(text, wanted)).toEqual({ kind: "unchanged" });
  });

  it("changes only the entry that differs", () => {
    const before =
      "extensions:\n  developer:\n    name: developer\n    display_name: Developer\n    type: builtin\n    enabled: true\n    timeout: 300\n  coder:\n    cmd: old\n";
    const plan = planConfigEdit(before, wanted);
    expect(plan).toMatchObject({ kind: "write", changed: ["coder"] });
  });

  it("keeps hostile strings as data", () => {
    const hostile = {
      x: {
        cmd: "$(rm -rf /)",
        args: ["'; echo pwned", "`id`", "line\nbreak", "yes", "0o17", "null", "#", "- a", ": b", "\u0001", "😀"],
      },
    };
    const want = new Map(Object.entries(hostile));
    const text = written("a: 1\n", want);
    expect(parse(text).x).toBeUndefined();
    expect(parse(text).extensions.x).toEqual(hostile.x);
    expect(parse(text, { version: "1.1" }).extensions.x).toEqual(hostile.x);
  });

  it.each([
    ["a list", "- a\n- b\n", /top level is not a mapping/],
    ["a scalar", "just text\n", /top level is not a mapping/],
    ["broken YAML", "key: [unclosed\n", /not valid YAML/],
    ["duplicate keys", "a: 1\na: 2\n", /not valid YAML/],
    ["two documents", "a: 1\n---\nb: 2\n", /not valid YAML/],
    ["extensions as a list", "extensions:\n  - coder\n", /extensions entry is not a mapping/],
    ["extensions as a string", "extensions: none\n", /extensions entry is not a mapping/],
    ["a flow top level", "{a: 1}\n", /flow style/],
    ["non-empty flow extensions", "extensions: {memory: {type: builtin}}\n", /flow style/],
    [
      "an alias into the extensions",
      "extensions: &e\n  coder:\n    cmd: old\ncopy: *e\n",
      /without changing something else/,
    ],
  ])("refuses %s and never rewrites it", (_name, before, reason) => {
    const plan = planConfigEdit(before, wanted);
    expect(plan.kind).toBe("refuse");
    expect(plan.kind === "refuse" && plan.reason).toMatch(reason);
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

// What the registry's scorer reads of the folder (tools/registry-pr/scorer.ts), as
// .github/scorecard/score-modules.ts (coder/registry@6be121e4) gathers it.
import { describe, expect, it } from "vitest";
import { estimatedTokens, readmeImages, scorerContext } from "../../../tools/registry-pr/scorer.js";

const file = (path: string, text = `${path}\n`) => ({ path, text });

describe("scorerContext", () => {
  it("reads the scored kinds of file in JavaScript's sort order, upper case first", () => {
    const files = [
      "variables.tf",
      "main.tf",
      "src/lib/exec.ts",
      "scripts/start.cjs",
      "package.json",
      "README.md",
      "docs/operations.md",
      "goose.tftest.hcl",
      ".tflint.hcl",
      "test/unit/a.test.ts",
      "modules/agentapi/templates/run.sh.tftpl",
      "src/supervisor/supervisor.sh",
    ].map((path) => file(path));
    const { text, scored } = scorerContext(files, []);
    expect([...text.matchAll(/^=== FILE: (.*) ===$/gm)].map((m) => m[1])).toEqual([
      "README.md",
      "docs/operations.md",
      "goose.tftest.hcl",
      "main.tf",
      "modules/agentapi/templates/run.sh.tftpl",
      "src/supervisor/supervisor.sh",
      "test/unit/a.test.ts",
      "variables.tf",
    ]);
    expect(scored).toBe(8);
  });

  it("cuts a file at 30,000 characters and says so", () => {
    const long = "x".repeat(30_001);
    expect(scorerContext([file("main.tf", long)], []).text).toBe(
      `=== FILE: main.tf ===\n${"x".repeat(30_000)}\n... [truncated]`,
    );
    expect(scorerContext([file("main.tf", long.slice(1))], []).text).toBe(`=== FILE: main.tf ===\n${long.slice(1)}`);
  });

  it("names the files it cuts short", () => {
    const files = [
      file("README.md", "x".repeat(30_001)),
      file("main.tf", "x".repeat(30_000)),
      file("a.ts", "x".repeat(40_000)),
    ];
    expect(scorerContext(files, []).cut).toEqual(["README.md"]);
  });

  it("says where each file starts, and ends with the README's pictures", () => {
    const { text, starts } = scorerContext(
      [file("main.tf", "a"), file("README.md", "b")],
      [
        { reference: "../../.images/goose-chat.png", bytes: 2048 },
        { reference: "docs/gone.png", bytes: "missing" },
        { reference: "https://example.com/x.png", bytes: null },
      ],
    );
    expect(text).toBe(
      "=== FILE: README.md ===\nb\n\n=== FILE: main.tf ===\na\n\n=== README IMAGE VERIFICATION ===\n" +
        "  ✓ ../../.images/goose-chat.png — exists (2.0 KB)\n  ✗ docs/gone.png — NOT FOUND\n  → https://example.com/x.png — external URL",
    );
    expect(starts).toEqual(
      new Map([
        ["README.md", 0],
        ["main.tf", text.indexOf("=== FILE: main.tf")],
      ]),
    );
  });
});

describe("readmeImages and estimatedTokens", () => {
  it("lists the README's relative and external pictures, not absolute paths", () => {
    expect(readmeImages("![a](docs/a.png) [link](x.md) ![b](/abs.png) ![c](https://e.com/c.png)")).toEqual([
      "docs/a.png",
      "https://e.com/c.png",
    ]);
  });

  it("counts 3.4 characters a token, rounding up", () => {
    expect(estimatedTokens(340)).toBe(100);
    expect(estimatedTokens(341)).toBe(101);
  });
});

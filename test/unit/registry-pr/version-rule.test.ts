// The registry's version rule (tools/registry-pr/version-rule.ts), read the way
// .github/scripts/version-bump.sh reads a README.
import { describe, expect, it } from "vitest";
import { inlineVersions, moduleBlockVersions, nextVersion } from "../../../tools/registry-pr/version-rule.js";
import { validReadme } from "./readme-fixture.js";

const SOURCE = "registry.coder.com/coder/goose/coder";

describe("nextVersion", () => {
  it.each([
    ["3.0.1", "major", "4.0.0"],
    ["3.0.1", "minor", "3.1.0"],
    ["3.0.1", "patch", "3.0.2"],
    ["9.9.9", "minor", "9.10.0"],
  ] as const)("%s + %s = %s", (current, change, want) => {
    expect(nextVersion(current, change)).toBe(want);
  });

  it("refuses a version that is not X.Y.Z", () => {
    expect(() => nextVersion("v3.0.1", "major")).toThrow('"v3.0.1" is not a version of the form X.Y.Z');
  });
});

describe("moduleBlockVersions", () => {
  it("finds the usage block's version, with its line", () => {
    const readme = validReadme("5.0.0");
    const line = readme.split("\n").findIndex((l) => l.includes('version  = "5.0.0"')) + 1;
    expect(moduleBlockVersions(readme, SOURCE)).toEqual([{ line, version: "5.0.0" }]);
  });

  it.each([
    [
      "another module's block",
      'module "login" {\n  source  = "registry.coder.com/coder/coder-login/coder"\n  version = "1.0.15"\n}\n',
      [],
    ],
    [
      "a block of this module",
      'module "goose" {\n  source  = "registry.coder.com/coder/goose/coder"\n  version = "4.0.0"\n}\n',
      [{ line: 3, version: "4.0.0" }],
    ],
    [
      "a version before the source",
      'module "goose" {\n  version = "3.0.1"\n  source  = "registry.coder.com/coder/goose/coder"\n}\n',
      [{ line: 2, version: "3.0.1" }],
    ],
    [
      // version-bump.sh's block ends at the first line that is only "}": what follows is outside it.
      "a version after a nested block",
      'module "goose" {\n  source = "registry.coder.com/coder/goose/coder"\n  task = {\n    id = "x"\n  }\n  version = "9.9.9"\n}\n',
      [],
    ],
    [
      "a resource block",
      'resource "coder_app" "x" {\n  source  = "registry.coder.com/coder/goose/coder"\n  version = "1.0.0"\n}\n',
      [],
    ],
  ])("%s", (_name, text, want) => {
    expect(moduleBlockVersions(text, SOURCE)).toEqual(want);
  });
});

describe("inlineVersions", () => {
  it.each([
    [
      '# Your template: source = "registry.coder.com/coder/goose/coder", version = "5.0.0".',
      [{ line: 1, version: "5.0.0" }],
    ],
    ['# Your template: source = "registry.coder.com/coder/goose/coder" plus a version.', []],
    ['source = "registry.coder.com/coder/agent-firewall/coder", version = "1.0.0"', []],
  ])("%s", (text, want) => {
    expect(inlineVersions(text, SOURCE)).toEqual(want);
  });
});

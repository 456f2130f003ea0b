// The registry validator's README rules (tools/registry-pr/readme-rules.ts): the expected
// messages are the validator's own (cmd/readmevalidation at coder/registry@6be121e4).
import { describe, expect, it } from "vitest";
import { moduleFolderErrors, moduleReadmeErrors } from "../../../tools/registry-pr/readme-rules.js";
import { iconExists, README_PATH, validReadme } from "./readme-fixture.js";

const errorsOf = (text: string) => moduleReadmeErrors(text, README_PATH, iconExists);
const USAGE_BLOCK = /```tf\n[\s\S]*?```\n/;

describe("moduleReadmeErrors", () => {
  it("passes a README that follows every rule", () => {
    expect(errorsOf(validReadme())).toEqual([]);
  });

  it.each<[string, (readme: string) => string, string]>([
    [
      "no usage block under the h1",
      (r) => r.replace(USAGE_BLOCK, ""),
      "did not find Terraform code block within h1 section",
    ],
    [
      "the usage block moved below the h1 section",
      (r) => {
        const block = USAGE_BLOCK.exec(r)?.[0] ?? "";
        return r.replace(block, "").replace("## Usage\n", `## Usage\n\n${block}`);
      },
      "did not find Terraform code block within h1 section",
    ],
    [
      "a usage block without a version",
      (r) => r.replace(/ {2}version {2}= "4\.0\.0"\n/, ""),
      "did not find Terraform code block that specifies 'version' field",
    ],
    [
      "two tf blocks in the h1 section",
      (r) => r.replace("## Usage", '```tf\nmodule "x" {}\n```\n\n## Usage'),
      "cannot have more than one Terraform code block in h1 section",
    ],
    [
      "an hcl block in the h1 section",
      (r) => r.replace("## Usage", "```hcl\nx = 1\n```\n\n## Usage"),
      "all hcl code blocks must be converted to tf",
    ],
    [
      "no paragraph in the h1 section",
      (r) => r.replace("Run Goose in your workspace.\n", ""),
      "did not find paragraph within h1 section",
    ],
    [
      "an unclosed block in the h1 section",
      (r) => r.replace(/\n```\n\n## Usage[\s\S]*$/, "\n"),
      "code blocks inside h1 section do not all terminate before end of file",
    ],
    ["a second h1", (r) => r.replace("## Usage", "# Usage"), "READMEs cannot contain more than h1 header"],
    [
      "a header level skipped",
      (r) => r.replace("### Another provider", "#### Another provider"),
      "headers are not allowed to increase more than 1 level at a time",
    ],
    [
      "no space after the #s",
      (r) => r.replace("## Usage", "##Usage"),
      "header does not have space between header characters and main header text",
    ],
    [
      "a level-7 header",
      (r) => r.replace("### Another provider", "####### Another provider"),
      "README/HTML files cannot have headers exceed level 6 (found level 7)",
    ],
    ["an alert in lower case", (r) => r.replace("[!NOTE]", "[!note]"), "GFM alerts must be in all caps"],
    ["an unknown alert type", (r) => r.replace("[!NOTE]", "[!INFO]"), 'GFM alert type "INFO" is not supported'],
    [
      "text after the alert",
      (r) => r.replace("[!NOTE]", "[!NOTE] Goose needs a model."),
      "GFM alerts must not have any extra content on the same line",
    ],
    [
      "two spaces before the alert",
      (r) => r.replace("> [!NOTE]", ">  [!NOTE]"),
      "GFM alerts must have one space between the '>' and the start of the GFM brackets",
    ],
    [
      "an alert as the last line",
      (r) => `${r}\n> [!TIP]\n`,
      "README has an incomplete GFM alert at the end of the file",
    ],
    [
      "no front matter",
      (r) => r.replace(/^---[\s\S]*?---\n/, ""),
      "failed to parse frontmatter: README does not have two sets of frontmatter fences",
    ],
    ["an unknown front matter key", (r) => r.replace("verified: false", "author: me"), 'detected unknown key "author"'],
    ["no description", (r) => r.replace(/description: .*\n/, ""), "frontmatter description cannot be empty"],
    [
      "an empty display name",
      (r) => r.replace("display_name: Goose", 'display_name: ""'),
      "if defined, display_name must not be empty string",
    ],
    ["no tags", (r) => r.replace(/tags: .*\n/, ""), "provided tags array is nil"],
    [
      "a tag a URL cannot hold",
      (r) => r.replace("tags: [agent, goose, ai]", "tags: [agent, ai agent]"),
      "found invalid tags (tags that cannot be used for filter state in the Registry website): [ai agent]",
    ],
    [
      "an icon outside .icons",
      (r) => r.replace("../../../../.icons/goose.svg", "../../.images/goose.svg"),
      'icon URL "../../.images/goose.svg" must reference the top-level .icons directory using "../../../../.icons/"',
    ],
    [
      "an icon that does not exist",
      (r) => r.replace("goose.svg", "gooose.svg"),
      'icon file does not exist at resolved path ".icons/gooose.svg" (referenced as "../../../../.icons/gooose.svg")',
    ],
    [
      "an icon by URL",
      (r) => r.replace("../../../../.icons/goose.svg", "https://example.com/goose.svg"),
      'icon URL must reference the top-level .icons directory, not an absolute URL "https://example.com/goose.svg"',
    ],
    [
      "an unknown operating system",
      (r) => r.replace("verified: false", "verified: false\nsupported_os: [linux, plan9]"),
      'detected unknown operating system "plan9"',
    ],
  ])("fails %s", (_name, plant, error) => {
    expect(errorsOf(plant(validReadme()))).toContain(error);
  });

  it("reads a # line inside a code block as code, not as a header", () => {
    expect(validReadme()).toContain("# not a header");
    expect(errorsOf(validReadme().replace("# not a header", "### not a header"))).toEqual([]);
  });
});

describe("moduleFolderErrors", () => {
  it.each<[string, string[], string[]]>([
    ["goose", ["README.md", "main.tf"], []],
    ["goose", ["README.md"], ["'main.tf' does not exist"]],
    [
      "goose_agent",
      ["README.md", "main.tf"],
      ['"goose_agent": name contains invalid characters (only alphanumeric characters and hyphens are allowed)'],
    ],
  ])("%s with %j", (name, files, want) => {
    expect(moduleFolderErrors(name, (file) => files.includes(file))).toEqual(want);
  });
});

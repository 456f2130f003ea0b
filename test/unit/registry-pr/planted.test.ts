// npm run registry-pr's checks against a folder with one planted violation each, run with
// the registry's real prettier (and its plugins) and typos that tools/setup.sh installs.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  type Context,
  linksResolve,
  logWriter,
  type Outcome,
  prettierCheck,
  readmeRules,
  scorerBudget,
  typosCheck,
  versionRule,
} from "../../../tools/registry-pr/checks.js";
import { toolsFromEnv } from "../../../tools/registry-pr/tools.js";
import { scratchFolders } from "../scratch.js";
import { validReadme } from "./readme-fixture.js";

const fresh = scratchFolders("registry-pr-planted");
const checks: Record<string, (ctx: Context) => Promise<Outcome>> = {
  readme: readmeRules,
  prettier: prettierCheck,
  typos: typosCheck,
  version: versionRule,
};

/** A registry tree whose module folder holds `readme`, a main.tf and `files` (by path in the folder). */
async function folderWith(readme: string, files: Record<string, string> = {}): Promise<Context> {
  const dir = await fresh();
  const root = path.join(dir, "tree");
  const module = path.join(root, "registry", "coder", "modules", "goose");
  await mkdir(module, { recursive: true });
  await writeFile(path.join(module, "README.md"), readme);
  await writeFile(path.join(module, "main.tf"), 'variable "agent_id" {\n  type = string\n}\n');
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(module, file)), { recursive: true });
    await writeFile(path.join(module, file), text);
  }
  const tools = toolsFromEnv();
  for (const tool of ["prettier", "typos", "terraform"])
    expect(tools.missing.get(tool), `${tool}: run tools/setup.sh, then . .tools/env.sh`).toBeUndefined();
  return { root, work: path.join(dir, "work"), tools, log: logWriter(path.join(dir, "logs")) };
}

describe("planted violations", () => {
  it("a folder with none passes each check", async () => {
    const ctx = await folderWith(validReadme());
    for (const [name, check] of Object.entries(checks)) expect(await check(ctx), name).toMatchObject({ ok: true });
  });

  it.each<[string, string, (readme: string) => string, RegExp]>([
    [
      "a README without the usage block under its h1",
      "readme",
      (r) => r.replace(/```tf\n[\s\S]*?```\n\n/, ""),
      /did not find Terraform code block within h1 section/,
    ],
    [
      "a Markdown table not laid out as prettier lays it out",
      "prettier",
      (r) => r.replace("| -------- | ------------- |", "|---|---|"),
      /not formatted: README\.md/,
    ],
    [
      "a typo",
      "typos",
      (r) => r.replace("Run Goose in your workspace.", "Run Goose in teh workspace."),
      /README\.md:\d+:\d+: .*`teh`/,
    ],
    [
      "a version that is not the next major",
      "version",
      (r) => r.replace('"4.0.0"', '"5.0.0"'),
      /README\.md:\d+ says 5\.0\.0, not 4\.0\.0/,
    ],
  ])("%s fails the %s check", async (_name, check, plant, detail) => {
    const planted = plant(validReadme());
    expect(planted).not.toBe(validReadme());
    const outcome = await (checks[check] as (ctx: Context) => Promise<Outcome>)(await folderWith(planted));
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toMatch(detail);
    if (check === "typos") expect(outcome.detail).not.toMatch(/build\.mjs/);
  });

  it.each<[string, string, RegExp]>([
    [
      "a relative link in the README, which registry.coder.com cannot follow",
      "See [the variables](variables.tf).",
      /make README\.md's link to variables\.tf absolute/,
    ],
    [
      "a link to a file of the folder on GitHub that the folder does not carry",
      "See [operations](https://github.com/coder/registry/blob/main/registry/coder/modules/goose/docs/operations.md).",
      /README\.md links docs\/operations\.md, which the folder does not carry/,
    ],
  ])("%s fails the links check", async (_name, line, detail) => {
    const ok = await linksResolve(
      await folderWith(
        `${validReadme()}\n[Inputs](https://github.com/coder/registry/blob/main/registry/coder/modules/goose/main.tf)\n`,
      ),
    );
    expect(ok).toMatchObject({ ok: true });
    const outcome = await linksResolve(await folderWith(`${validReadme()}\n${line}\n`));
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toMatch(detail);
  });

  it("a README longer than the scorer reads fails the scorer budget check, which names it", async () => {
    const long = `${validReadme()}\n${"Goose runs in your workspace. ".repeat(1_100)}\n`;
    const outcome = await scorerBudget(await folderWith(long));
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toMatch(
      /^shorten README\.md to 30,000 characters \(the folder's has [\d,]+\): the scorer reads no further/,
    );
    expect(await scorerBudget(await folderWith(validReadme()))).toMatchObject({ ok: true });
  });

  it("a misspelling in a bundle fails the typos check, which says to make build.mjs reserve names of its shape", async () => {
    const bundle = "(()=>{var ot=process.argv;console.log(ot)})();\n";
    const outcome = await typosCheck(await folderWith(validReadme(), { "scripts/start.cjs": bundle }));
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toMatch(
      /^a word flagged in scripts\/\*\.cjs that src\/ does not spell .*: make build\.mjs reserve names of its shape/,
    );
    expect(outcome.detail).toMatch(/scripts\/start\.cjs:1:\d+: .*`ot`/);
  });
});

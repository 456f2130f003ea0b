// npm run registry-pr: writes into .tmp/registry-pr/ what a coder/registry pull request
// would add (registry/coder/modules/goose/ and the README's picture in
// registry/coder/.images/), then runs on it each of the registry's checks that can run
// here, one line each (docs/development.md, "The registry pull request"). Exits 1 when
// any fails.
//   npm run registry-pr -- --format FILE...   formats FILEs with the registry's prettier
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import {
  bundlesRebuild,
  bunTests,
  type Context,
  folderLayout,
  linksResolve,
  logWriter,
  type Outcome,
  prettierCheck,
  prettierNewestCheck,
  readmeRules,
  scorerBudget,
  setUOrder,
  shellcheck,
  terraformFmt,
  terraformTest,
  terraformValidate,
  typosCheck,
  variableNames,
  versionRule,
} from "./checks.js";
import { writeDescription } from "./description.js";
import { runProgram } from "./process.js";
import { IMAGES_DIR, MODULE_DIR } from "./registry.js";
import { stage } from "./stage.js";
import { prettierArgs, repoRoot, type Tools, toolsFromEnv } from "./tools.js";

type Check = [name: string, run: (ctx: Context) => Promise<Outcome>, needs: string[]];

// In the order a maintainer meets them: the registry's CI jobs (ci.yaml's
// validate-readme-files, validate-style, test-terraform), the version-bump workflow, the
// scorer, then what this project adds.
const CHECKS: Check[] = [
  ["folder layout (readmevalidation)", folderLayout, []],
  ["README rules (readmevalidation)", readmeRules, []],
  ["prettier --check (fmt:ci)", prettierCheck, ["prettier", "terraform"]],
  ["prettier --check, the newest prettier (the registry's next bump)", prettierNewestCheck, ["prettier", "terraform"]],
  ["terraform fmt (fmt:ci)", terraformFmt, ["terraform"]],
  ["typos (typos.toml)", typosCheck, ["typos"]],
  ["terraform validate (terraform-validate)", terraformValidate, ["terraform"]],
  ["variable names (terraform-validate)", variableNames, []],
  ["terraform test (tftest)", terraformTest, ["terraform"]],
  ["shellcheck (shellcheck)", shellcheck, ["shellcheck"]],
  ["set -u order (validate_set_u_order.sh)", setUOrder, []],
  ["bun test (tstest)", bunTests, ["bun"]],
  ["version (version-bump.sh --ci major)", versionRule, []],
  ["scorer budget (score-modules.ts)", scorerBudget, []],
  ["links resolve in the folder", linksResolve, []],
  ["bundles rebuild from the folder's sources", bundlesRebuild, []],
];

// What cannot run on this project's machines, and why.
const CANNOT = [
  [
    "the registry's own ~test helpers (tstest)",
    "main.test.ts runs above against this repository's stand-in of test/test.ts (tools/registry-pr/bun-test/), with the names and results of the registry's; the registry's own file is not in this repository",
  ],
  [
    "the scorer's score (module-scorecard-check.yaml)",
    "it sends the folder to Anthropic's API with the registry's key; only what it would send is measured above",
  ],
  [
    "the registry's own programs (go run ./cmd/readmevalidation, version-bump.sh)",
    "they run in a clone of coder/registry with its release tags; the checks above apply their published rules to the folder",
  ],
];

/** The versions the checks run with, as installed. */
function toolVersions(tools: Tools): string {
  const version = (pkg: string) => {
    try {
      return JSON.parse(readFileSync(path.join(tools.modules, pkg, "package.json"), "utf8")).version as string;
    } catch {
      return "?";
    }
  };
  const env = process.env;
  return [
    `prettier ${version("prettier")} and ${version("prettier-newest")} (prettier-plugin-sh ${version("prettier-plugin-sh")}, ${env.TF_FLAVOR ?? "terraform"} ${env.TF_VERSION ?? "?"} for \`\`\`tf blocks)`,
    `typos ${env.TYPOS_VERSION ?? "?"}`,
    `bun ${env.BUN_VERSION ?? "?"}`,
  ].join(", ");
}

const line = (state: string, name: string, detail: string) => console.log(`${state.padEnd(7)} ${name}: ${detail}`);

async function format(files: string[]): Promise<number> {
  const tools = toolsFromEnv();
  if (tools.missing.has("prettier")) {
    console.error(`registry-pr: prettier is not installed: ${tools.missing.get("prettier")}`);
    return 1;
  }
  const prettier = prettierArgs(tools);
  const ran = await runProgram(process.execPath, [prettier.program, ...prettier.args, "--write", ...files], {
    cwd: process.cwd(),
    env: { ...process.env, TF: tools.tf },
  });
  process.stdout.write(ran.output);
  return ran.code ?? 1;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args[0] === "--format") return format(args.slice(1));
  if (args.length > 0) {
    console.error("usage: npm run registry-pr [-- --format FILE...]");
    return 2;
  }
  const started = Date.now();
  const tools = toolsFromEnv();
  const root = path.join(repoRoot, ".tmp", "registry-pr");
  const work = path.join(repoRoot, ".tmp", "registry-pr-work");
  await rm(work, { recursive: true, force: true });
  if (tools.missing.has("prettier")) {
    line("FAILED", "staging", `prettier is not installed (${tools.missing.get("prettier")})`);
    return 1;
  }
  const written = await stage(root, tools);
  const images = written.filter((file) => file.startsWith(`${IMAGES_DIR}/`)).length;
  console.log(
    `registry-pr: ${written.length - images} files in ${path.relative(repoRoot, root)}/${MODULE_DIR}/ and ${images} in ${IMAGES_DIR}/; full outputs in ${path.relative(repoRoot, work)}/logs/`,
  );
  console.log(`registry-pr: with ${toolVersions(tools)}`);
  const ctx: Context = { root, work, tools, log: logWriter(path.join(work, "logs")) };
  let failed = 0;
  const passed: Array<{ name: string; detail: string }> = [];
  for (const [name, run, needs] of CHECKS) {
    const missing = needs.filter((tool) => tools.missing.has(tool));
    const outcome: Outcome =
      missing.length > 0
        ? {
            ok: false,
            detail: missing.map((tool) => `${tool} is not installed (${tools.missing.get(tool)})`).join("; "),
          }
        : await run(ctx).catch((error: Error) => ({ ok: false, detail: error.message }));
    if (!outcome.ok) failed++;
    else passed.push({ name, detail: outcome.detail });
    line(outcome.ok ? "ok" : "FAILED", name, outcome.detail);
  }
  for (const [name, why] of CANNOT) line("cannot", name, why);
  const description = await writeDescription(root, passed);
  console.log(`registry-pr: the pull request's description is ${path.relative(repoRoot, description)}`);
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`registry-pr: ${failed === 0 ? "every check passed" : `${failed} check(s) FAILED`} (${seconds} s)`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`registry-pr: ${error.stack ?? error.message}`);
    process.exit(1);
  },
);

// The registry's checks, each run on the staged registry tree `root` (see main.ts). Each
// returns one line's worth: whether it passed and what it found. Programs that write into
// the folder they run in (terraform, bun, the build) run in a copy under `work`.
import { existsSync, statSync } from "node:fs";
import { cp, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import {
  folderUrlTargets,
  hyphenatedVariables,
  relativeLinkTargets,
  setUBeforeSource,
  siteUnresolvable,
} from "./folder-rules.js";
import { runProgram } from "./process.js";
import { moduleFolderErrors, moduleReadmeErrors } from "./readme-rules.js";
import {
  CHANGE,
  MODULE,
  MODULE_DIR,
  MODULE_SOURCE,
  PUBLISHED_VERSION,
  REGISTRY_ICONS,
  SCORER_MAX_FILE_CHARS,
  SCORER_TOKEN_BUDGET,
} from "./registry.js";
import { estimatedTokens, type FolderFile, type ImageCheck, readmeImages, scorerContext } from "./scorer.js";
import { configDir, prettierArgs, repoRoot, type Tools } from "./tools.js";
import { inlineVersions, moduleBlockVersions, nextVersion, type VersionMention } from "./version-rule.js";

export interface Outcome {
  ok: boolean;
  detail: string;
}

export interface Context {
  /** The staged registry tree (what the pull request adds). */
  root: string;
  /** Scratch space for copies. */
  work: string;
  tools: Tools;
  /** Full outputs go here, one file per check. */
  log: (name: string, text: string) => Promise<string>;
}

const moduleDir = (root: string) => path.join(root, MODULE_DIR);

/** The folder's files, relative to it, with forward slashes. */
export async function folderFiles(root: string): Promise<string[]> {
  const entries = await readdir(moduleDir(root), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(moduleDir(root), path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort();
}

const read = (root: string, file: string) => readFile(path.join(moduleDir(root), file), "utf8");
const list = (items: string[], max = 6) =>
  items.length <= max ? items.join("; ") : `${items.slice(0, max).join("; ")}; and ${items.length - max} more`;
const result = (errors: string[], passed: string): Outcome =>
  errors.length === 0 ? { ok: true, detail: passed } : { ok: false, detail: list(errors) };

/** A copy of the staged tree for programs that write where they run. */
async function scratchCopy(ctx: Context, name: string): Promise<string> {
  const copy = path.join(ctx.work, name);
  await cp(ctx.root, copy, { recursive: true });
  return path.join(copy, MODULE_DIR);
}

export async function folderLayout(ctx: Context): Promise<Outcome> {
  const files = await folderFiles(ctx.root);
  const errors = moduleFolderErrors(MODULE, (file) => files.includes(file));
  return result(errors, `${MODULE_DIR}: ${files.length} files, with README.md and main.tf`);
}

export async function readmeRules(ctx: Context): Promise<Outcome> {
  const errors = moduleReadmeErrors(await read(ctx.root, "README.md"), `${MODULE_DIR}/README.md`, (registryPath) =>
    REGISTRY_ICONS.some((icon) => registryPath === `.icons/${icon}`),
  );
  return result(
    errors.map((error) => `README.md: ${error}`),
    "front matter, icon, header levels, GitHub alerts, h1 section with one ```tf block and its version",
  );
}

export async function versionRule(ctx: Context): Promise<Outcome> {
  const want = nextVersion(PUBLISHED_VERSION, CHANGE);
  const blocks = moduleBlockVersions(await read(ctx.root, "README.md"), MODULE_SOURCE);
  const errors = blocks.length === 0 ? [`README.md has no module block with source = "${MODULE_SOURCE}"`] : [];
  const wrong = (file: string, mentions: VersionMention[]) =>
    mentions.filter((m) => m.version !== want).map((m) => `${file}:${m.line} says ${m.version}, not ${want}`);
  errors.push(...wrong("README.md", blocks));
  // The registry's script reads only README.md; the folder's other mentions must agree with it.
  let others = 0;
  for (const file of await folderFiles(ctx.root)) {
    if (!/\.(md|tf|hcl)$/.test(file)) continue;
    const text = await read(ctx.root, file);
    const mentions = [
      ...(file.endsWith(".md") && file !== "README.md" ? moduleBlockVersions(text, MODULE_SOURCE) : []),
      ...inlineVersions(text, MODULE_SOURCE),
    ];
    others += mentions.length;
    errors.push(...wrong(file, mentions));
  }
  return result(
    errors,
    `README.md's ${blocks.length} registry module block(s) and ${others} other mention(s) say ${want} (${PUBLISHED_VERSION} + ${CHANGE})`,
  );
}

export const prettierCheck = (ctx: Context) => prettierCheckWith(ctx, "prettier");

/**
 * The same check with the newest prettier (tools/registry-pr/package.json's
 * prettier-newest): the registry's next bump of its pin must not fail this folder.
 */
export const prettierNewestCheck = (ctx: Context) => prettierCheckWith(ctx, "prettier-newest");

async function prettierCheckWith(ctx: Context, pkg: string): Promise<Outcome> {
  const prettier = prettierArgs(ctx.tools, pkg);
  const ran = await runProgram(process.execPath, [prettier.program, ...prettier.args, "--check", "."], {
    cwd: ctx.root,
    env: { ...process.env, TF: ctx.tools.tf },
  });
  const logged = await ctx.log(pkg, ran.output);
  if (ran.code === 0) return { ok: true, detail: `every file in the registry's style (${pkg} --check .)` };
  const files = [...ran.output.matchAll(/^\[(?:warn|error)\] (registry\/\S+)/gm)].map((m) =>
    path.posix.relative(MODULE_DIR, m[1] as string),
  );
  // A run that names no file failed for another reason: its first lines say which.
  const why = `prettier exited ${ran.code ?? "by a signal"}: ${ran.output.trim().split("\n").slice(0, 3).join(" | ")}`;
  return { ok: false, detail: `${files.length ? `not formatted: ${list(files)}` : why} (${logged})` };
}

export async function typosCheck(ctx: Context): Promise<Outcome> {
  const ran = await runProgram(
    ctx.tools.typos,
    ["--isolated", `--config=${path.join(configDir, "typos.toml")}`, "--no-ignore", "--format=brief", "registry"],
    { cwd: ctx.root },
  );
  const logged = await ctx.log("typos", ran.output);
  if (ran.code === 0) return { ok: true, detail: "no findings with the registry's typos.toml" };
  const findings = ran.output
    .split("\n")
    .filter((line) => line.startsWith("registry/"))
    .map((line) => line.replace(`${MODULE_DIR}/`, ""));
  const fix = findings.some((finding) => /^scripts\/[^/:]+\.cjs:/.test(finding))
    ? "a word flagged in scripts/*.cjs that src/ does not spell is a name esbuild made up: make build.mjs reserve names of its shape (`reserved`), then npm run build; "
    : "";
  return { ok: false, detail: `${fix}${findings.length} finding(s): ${list(findings, 3)} (${logged})` };
}

/**
 * Every link of the folder's Markdown reaches a file it carries: relative ones (GitHub resolves
 * them in the docs pages) and those to the folder on GitHub (folderUrl); the README's own links
 * are all absolute, as registry.coder.com shows it with no base for a relative link.
 */
export async function linksResolve(ctx: Context): Promise<Outcome> {
  const errors: string[] = [];
  let links = 0;
  const report = (error: string) => {
    if (!errors.includes(error)) errors.push(error);
  };
  for (const file of await folderFiles(ctx.root)) {
    if (!file.endsWith(".md")) continue;
    const text = await read(ctx.root, file);
    const targets = [...relativeLinkTargets(`${MODULE_DIR}/${file}`, text), ...folderUrlTargets(text)];
    for (const target of targets) {
      links++;
      if (!existsSync(path.join(ctx.root, target)))
        report(`${file} links ${path.posix.relative(MODULE_DIR, target)}, which the folder does not carry`);
    }
    if (file === "README.md")
      for (const target of siteUnresolvable(text))
        report(
          `make README.md's link to ${target} absolute (tools/registry-pr/folder-plan.ts folderReadme does it for a file that travels): registry.coder.com cannot resolve a relative link`,
        );
  }
  return result(errors, `${links} links and pictures into the folder from its Markdown all resolve`);
}

/** Loads the tokenizer installed with the registry checks' tools. */
function tokenizer(modules: string): ((text: string) => number) | null {
  try {
    const required = createRequire(path.join(modules, "noop.js"))("@anthropic-ai/tokenizer") as {
      countTokens: (text: string) => number;
    };
    return required.countTokens;
  } catch {
    return null;
  }
}

export async function scorerBudget(ctx: Context): Promise<Outcome> {
  const files: FolderFile[] = [];
  for (const file of await folderFiles(ctx.root)) files.push({ path: file, text: await read(ctx.root, file) });
  const readme = files.find((file) => file.path === "README.md")?.text ?? "";
  const images: ImageCheck[] = readmeImages(readme).map((reference) => {
    if (/^https?:\/\//.test(reference)) return { reference, bytes: null };
    const resolved = path.resolve(moduleDir(ctx.root), reference);
    return { reference, bytes: existsSync(resolved) ? statSync(resolved).size : "missing" };
  });
  const context = scorerContext(files, images);
  const chars = context.text.length;
  const estimate = estimatedTokens(chars);
  const count = tokenizer(ctx.tools.modules);
  const counted = count ? count(context.text) : null;
  await ctx.log("scorer-context", context.text);
  const at = (file: string) => {
    const start = context.starts.get(file);
    return start === undefined
      ? `${file} not read`
      : `${file} from token ${estimatedTokens(start).toLocaleString("en")} (${Math.round((100 * start) / chars)}%)`;
  };
  const figure =
    `${chars.toLocaleString("en")} characters in ${context.scored} files, ${estimate.toLocaleString("en")} tokens at 3.4 characters a token` +
    `${counted === null ? "" : ` (${counted.toLocaleString("en")} by @anthropic-ai/tokenizer)`}; ${at("main.tf")}, ${at("variables.tf")}`;
  const over = Math.max(estimate, counted ?? 0) > SCORER_TOKEN_BUDGET;
  const cut = context.cut.map(
    (file) =>
      `shorten ${file} to ${SCORER_MAX_FILE_CHARS.toLocaleString("en")} characters (the folder's has ${files.find((f) => f.path === file)?.text.length.toLocaleString("en")}): the scorer reads no further`,
  );
  if (cut.length > 0) return { ok: false, detail: `${list(cut)}; ${figure}` };
  return { ok: !over, detail: `${figure}; budget ${SCORER_TOKEN_BUDGET.toLocaleString("en")} tokens` };
}

const shellScripts = async (root: string) => (await folderFiles(root)).filter((file) => file.endsWith(".sh"));

export async function shellcheck(ctx: Context): Promise<Outcome> {
  const scripts = await shellScripts(ctx.root);
  if (scripts.length === 0) return { ok: true, detail: "no .sh files" };
  const ran = await runProgram(
    ctx.tools.shellcheck,
    [`--rcfile=${path.join(configDir, "shellcheckrc")}`, "--severity=warning", "--format=gcc", ...scripts],
    { cwd: moduleDir(ctx.root) },
  );
  const logged = await ctx.log("shellcheck", ran.output);
  return ran.code === 0
    ? { ok: true, detail: `${scripts.join(", ")} (--severity=warning, the registry's .shellcheckrc)` }
    : { ok: false, detail: `${list(ran.output.trim().split("\n"), 3)} (${logged})` };
}

export async function setUOrder(ctx: Context): Promise<Outcome> {
  const errors: string[] = [];
  for (const file of await shellScripts(ctx.root)) {
    const wrong = setUBeforeSource(await read(ctx.root, file));
    if (wrong) errors.push(`${file}: 'set -u' at line ${wrong.setU} comes before 'source' at line ${wrong.source}`);
  }
  return result(errors, "no script turns on set -u before sourcing a profile");
}

export async function variableNames(ctx: Context): Promise<Outcome> {
  const errors: string[] = [];
  for (const file of (await folderFiles(ctx.root)).filter((f) => f.endsWith(".tf")))
    for (const name of hyphenatedVariables(await read(ctx.root, file)))
      errors.push(`${file}: variable "${name}" contains a hyphen; rename it to "${name.replaceAll("-", "_")}"`);
  return result(errors, "every variable is snake_case");
}

export async function terraformFmt(ctx: Context): Promise<Outcome> {
  const ran = await runProgram(ctx.tools.tf, ["fmt", "-check", "-recursive", "-diff", "-no-color"], {
    cwd: moduleDir(ctx.root),
  });
  const logged = await ctx.log("terraform-fmt", ran.output);
  return ran.code === 0
    ? { ok: true, detail: "terraform fmt -check -recursive" }
    : {
        ok: false,
        detail: `not formatted: ${list(ran.output.split("\n").filter((l) => /\.(tf|hcl)$/.test(l)))} (${logged})`,
      };
}

async function terraform(
  ctx: Context,
  dir: string,
  args: string[],
  name: string,
): Promise<{ ok: boolean; log: string }> {
  const init = await runProgram(ctx.tools.tf, ["init", "-upgrade", "-input=false", "-no-color"], { cwd: dir });
  const ran = init.code === 0 ? await runProgram(ctx.tools.tf, args, { cwd: dir }) : init;
  return { ok: init.code === 0 && ran.code === 0, log: await ctx.log(name, `${init.output}\n${ran.output}`) };
}

export async function terraformValidate(ctx: Context): Promise<Outcome> {
  const dir = await scratchCopy(ctx, "validate");
  const ran = await terraform(ctx, dir, ["validate", "-no-color"], "terraform-validate");
  return ran.ok
    ? { ok: true, detail: "terraform init -upgrade && terraform validate" }
    : { ok: false, detail: `see ${ran.log}` };
}

export async function terraformTest(ctx: Context): Promise<Outcome> {
  const folder = await scratchCopy(ctx, "test");
  const dirs = [
    ...new Set(
      (await folderFiles(ctx.root)).filter((f) => f.endsWith(".tftest.hcl")).map((f) => path.posix.dirname(f)),
    ),
  ];
  const passed: string[] = [];
  const failed: string[] = [];
  for (const dir of dirs) {
    const name = `terraform-test-${dir === "." ? "root" : dir.replaceAll("/", "-")}`;
    const ran = await terraform(ctx, path.join(folder, dir), ["test", "-no-color", "-verbose"], name);
    const summary = /(Success|Failure)! (\d+) passed, (\d+) failed/.exec(await readFile(ran.log, "utf8"));
    const figure = summary ? `${summary[2]} passed, ${summary[3]} failed` : "no summary";
    (ran.ok ? passed : failed).push(`${dir} (${figure}${ran.ok ? "" : `; ${ran.log}`})`);
  }
  return failed.length === 0
    ? { ok: true, detail: `terraform test in ${list(passed)}` }
    : { ok: false, detail: `failed in ${list(failed)}` };
}

/**
 * The registry's `bun test` for the folder's main.test.ts, at the root of a copy of the
 * registry's tree, with `~test` mapped as the registry's tsconfig.json maps it: to this
 * repository's stand-in of its helpers (bun-test/test.ts), as the registry's own cannot be had
 * here. The registry's setup.ts, which only clears Docker containers after the run, is left out.
 */
export async function bunTests(ctx: Context): Promise<Outcome> {
  const root = path.join(ctx.work, "bun");
  await cp(ctx.root, root, { recursive: true });
  await mkdir(path.join(root, "test"));
  await cp(path.join(repoRoot, "tools", "registry-pr", "bun-test", "test.ts"), path.join(root, "test", "test.ts"));
  await writeFile(
    path.join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { paths: { "~test": ["./test/test.ts"] } } }),
  );
  const ran = await runProgram(ctx.tools.bun, ["test", `./${MODULE_DIR}/`], { cwd: root });
  const logged = await ctx.log("bun-test", ran.output);
  const counts = /(\d+) pass\s+(\d+) fail/.exec(ran.output);
  const files = /Ran \d+ tests? across (\d+) files?/.exec(ran.output)?.[1];
  return ran.code === 0 && counts && files === "1"
    ? { ok: true, detail: `bun test runs main.test.ts: ${counts[1]} pass, ${counts[2]} fail` }
    : { ok: false, detail: `bun test of the folder failed (${logged})` };
}

export async function bundlesRebuild(ctx: Context): Promise<Outcome> {
  const dir = await scratchCopy(ctx, "rebuild");
  const bundles = (await folderFiles(ctx.root)).filter((f) => /^scripts\/[^/]+\.cjs$/.test(f));
  // What a maintainer's `npm install` in the folder provides: the packages package.json pins.
  await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
  const ran = await runProgram(process.execPath, ["build.mjs"], { cwd: dir });
  const logged = await ctx.log("rebuild", ran.output);
  if (ran.code !== 0) return { ok: false, detail: `node build.mjs failed in the folder (${logged})` };
  const differ: string[] = [];
  for (const bundle of bundles)
    if ((await readFile(path.join(dir, bundle), "utf8")) !== (await read(ctx.root, bundle))) differ.push(bundle);
  return differ.length === 0
    ? { ok: true, detail: `node build.mjs in the folder rebuilds ${bundles.join(" and ")} byte for byte from its src/` }
    : { ok: false, detail: `rebuilt from the folder's src/, ${differ.join(" and ")} differ (${logged})` };
}

/** Writes a check's full output under `dir` and names the file. */
export function logWriter(dir: string): Context["log"] {
  return async (name, text) => {
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `${name}.log`);
    await writeFile(file, text);
    return path.relative(process.cwd(), file);
  };
}

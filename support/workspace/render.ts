// Renders the module the way Coder does: `terraform apply` with the real coder
// provider, which reads the workspace's CODER_* variables from the environment.
// The coder_scripts come out of the applied state.
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { run, tail } from "./exec.js";
import { repoRoot, scratchDir, tools } from "./repo.js";

export interface AppliedResource {
  address: string;
  values: Record<string, unknown>;
}

/** The parts of `terraform show -json` read here. */
interface ShownModule {
  resources?: AppliedResource[];
  child_modules?: ShownModule[];
}

interface ShownState {
  values?: { root_module?: ShownModule; outputs?: Record<string, { value: unknown }> };
}

export interface Applied {
  resources: AppliedResource[];
  outputs: Record<string, unknown>;
  /** terraform apply's `Warning: ...` lines, once each. */
  warnings: string[];
}

export interface Rendered extends Applied {
  install: string;
  start: string;
  stop: string;
}

/** Every resource and data source, child modules included. */
function appliedResources(module: ShownModule | undefined): AppliedResource[] {
  if (!module) return [];
  return [
    ...(module.resources ?? []).map((r) => ({ address: r.address, values: r.values })),
    ...(module.child_modules ?? []).flatMap(appliedResources),
  ];
}

/** The applied values of one resource; an error naming it when it is missing. */
export function resourceValues(applied: Applied, address: string): Record<string, unknown> {
  const found = applied.resources.find((r) => r.address === address);
  if (!found) throw new Error(`no ${address} in the applied state`);
  return found.values;
}

function withScripts(applied: Applied): Rendered {
  const script = (name: string) =>
    String(resourceValues(applied, `module.goose.module.agentapi.coder_script.${name}`).script);
  return { ...applied, install: script("install"), start: script("start"), stop: script("stop") };
}

/**
 * init (once per folder), apply afresh (the previous apply's state removed
 * first, so everything is created again), then show -json. `coderEnv` is what
 * the provider reads: CODER_WORKSPACE_ID, CODER_TASK_PROMPT, and so on.
 */
async function apply(
  dir: string,
  coderEnv: Record<string, string>,
  vars: Record<string, string> = {},
): Promise<Applied> {
  const env = { ...process.env, ...coderEnv, TF_IN_AUTOMATION: "1" };
  const terraform = async (args: string[], timeoutMs = 180_000) => {
    const result = await run(tools.terraform, [...args, "-no-color"], { cwd: dir, env, timeoutMs });
    if (result.code !== 0)
      throw new Error(`terraform ${args[0]} exited ${result.code}:\n${tail(result.stdout, 40)}\n${result.stderr}`);
    return result;
  };
  if (!(await readdir(dir)).includes(".terraform")) await terraform(["init", "-input=false"]);
  for (const old of ["terraform.tfstate", "terraform.tfstate.backup"]) await rm(path.join(dir, old), { force: true });
  const applied = await terraform([
    "apply",
    "-auto-approve",
    "-input=false",
    ...Object.entries(vars).map(([k, v]) => `-var=${k}=${v}`),
  ]);
  const warnings = [
    ...new Set(`${applied.stdout}${applied.stderr}`.split("\n").filter((line) => line.startsWith("Warning: "))),
  ];
  const state = JSON.parse((await terraform(["show", "-json"], 60_000)).stdout) as ShownState;
  const outputs = Object.fromEntries(Object.entries(state.values?.outputs ?? {}).map(([k, v]) => [k, v.value]));
  return { resources: appliedResources(state.values?.root_module), outputs, warnings };
}

/** A terraform block that pins the coder provider to exactly `version` (default tools.coderProviderVersion). */
function coderProviderPin(version = tools.coderProviderVersion) {
  return { required_providers: { coder: { source: "coder/coder", version } } };
}

let fixtureDir: string | null = null;

/**
 * A module input that takes the template's `data "coder_task" "me"` whole, as
 * a task template does (`task = data.coder_task.me`): renderModule then
 * declares the data source, which the real provider fills from CODER_TASK_ID
 * and CODER_TASK_PROMPT.
 */
export const CODER_TASK = "${data.coder_task.me}";

/**
 * Applies a template that uses the module by local path, written as JSON so
 * any value (hostile strings included) is passed as data. One folder per
 * process, so terraform init runs once.
 */
export async function renderModule(
  vars: Record<string, unknown>,
  coderEnv: Record<string, string> = {},
): Promise<Rendered> {
  fixtureDir ??= await scratchDir("tf");
  const config = {
    terraform: coderProviderPin(),
    ...(Object.values(vars).includes(CODER_TASK) ? { data: { coder_task: { me: {} } } } : {}),
    module: { goose: { source: repoRoot, ...vars } },
    output: {
      task_app_id: { value: "${module.goose.task_app_id}" },
      session_name: { value: "${module.goose.session_name}" },
    },
  };
  await writeFile(path.join(fixtureDir, "main.tf.json"), JSON.stringify(config, null, 2));
  return withScripts(await apply(fixtureDir, coderEnv));
}

const MODULE_SOURCE_LINE = /^(\s*source\s*=\s*)"(?:\.\.\/)*\.\."\s*$/m;

/**
 * Writes examples/<name> (or, for a `name` with a slash, that folder of the
 * repository) into `dir` as a template author would have it, so that init
 * writes nothing (lock file, .terraform) into the repository. Only the module
 * source changes: its relative path becomes the path to this repository; and an
 * override file narrows the template's provider constraint to `provider`
 * (Terraform merges required_providers from *_override files). `edit` may
 * change the template's text first.
 */
async function copyExample(
  name: string,
  dir: string,
  provider = tools.coderProviderVersion,
  edit: (template: string) => string = (t) => t,
): Promise<void> {
  const file = path.join(repoRoot, name.includes("/") ? name : path.join("examples", name), "main.tf");
  const template = await readFile(file, "utf8");
  if (!MODULE_SOURCE_LINE.test(template))
    throw new Error(`${path.relative(repoRoot, file)} has no \`source = "../.."\` (or deeper) line for the module`);
  await writeFile(
    path.join(dir, "main.tf"),
    edit(template).replace(MODULE_SOURCE_LINE, `$1"${path.relative(dir, repoRoot)}"`),
  );
  await writeFile(
    path.join(dir, "coder_provider_override.tf.json"),
    JSON.stringify({ terraform: coderProviderPin(provider) }),
  );
}

/** Applies examples/<name> as a template author would, from a copy in `dir` (see copyExample). */
export async function renderExample(
  name: string,
  dir: string,
  vars: Record<string, string>,
  coderEnv: Record<string, string>,
): Promise<Rendered> {
  await copyExample(name, dir);
  return withScripts(await apply(dir, coderEnv, vars));
}

/** One diagnostic of `terraform plan -json`, its file resolved to an absolute path. */
export interface PlanDiagnostic {
  severity: "error" | "warning";
  summary: string;
  detail: string;
  /** Absolute path of the file the diagnostic points at; null when it points at none. */
  file: string | null;
  line: number | null;
}

export interface PlanOptions {
  /** The coder provider release to plan with, exactly. */
  provider: string;
  /** What the provider reads, for example CODER_TASK_ID and CODER_TASK_PROMPT. */
  coderEnv?: Record<string, string>;
  /** Changes the template's text before it is planned. */
  edit?: (template: string) => string;
}

/**
 * `terraform init` and `terraform plan -json` of examples/<name> (or a folder, see copyExample), copied into
 * `dir` as renderExample does, with exactly the given provider: the plan's
 * exit code and every diagnostic it printed.
 */
export async function planExample(
  name: string,
  dir: string,
  opts: PlanOptions,
): Promise<{ code: number; diagnostics: PlanDiagnostic[] }> {
  await copyExample(name, dir, opts.provider, opts.edit);
  const env = { ...process.env, ...opts.coderEnv, TF_IN_AUTOMATION: "1" };
  const init = await run(tools.terraform, ["init", "-input=false", "-no-color"], { cwd: dir, env, timeoutMs: 180_000 });
  if (init.code !== 0) throw new Error(`terraform init exited ${init.code}:\n${tail(init.stdout, 40)}\n${init.stderr}`);
  const plan = await run(tools.terraform, ["plan", "-json", "-input=false", "-lock=false"], {
    cwd: dir,
    env,
    timeoutMs: 180_000,
  });
  const diagnostics: PlanDiagnostic[] = [];
  for (const line of plan.stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as {
      type?: string;
      diagnostic?: {
        severity: "error" | "warning";
        summary: string;
        detail?: string;
        range?: { filename: string; start: { line: number } };
      };
    };
    if (event.type !== "diagnostic" || !event.diagnostic) continue;
    const d = event.diagnostic;
    diagnostics.push({
      severity: d.severity,
      summary: d.summary,
      detail: d.detail ?? "",
      file: d.range ? path.resolve(dir, d.range.filename) : null,
      line: d.range?.start.line ?? null,
    });
  }
  return { code: plan.code, diagnostics };
}

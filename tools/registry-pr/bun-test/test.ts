// A stand-in for coder/registry's `~test` helpers (test/test.ts at
// coder/registry@6be121e4), for running the folder's main.test.ts here: the
// same names, arguments and results for what main.test.ts uses. The
// registry's own file cannot travel with the pull request, and this one does
// not either: tools/registry-pr/checks.ts puts it where the registry's
// tsconfig.json maps `~test`.

import { expect, it } from "bun:test";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, rm } from "node:fs/promises";

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface TerraformState {
  outputs: Record<string, { type: unknown; value: JsonValue }>;
  resources: Array<{ type: string; name: string; instances: Array<{ attributes: Record<string, unknown> }> }>;
}

function terraform(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("terraform", args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? 1, stderr }));
  });
}

/** `terraform init` in `dir`; throws on failure. */
export async function runTerraformInit(dir: string): Promise<void> {
  const ran = await terraform(["init", "-input=false", "-no-color"], dir, process.env);
  if (ran.code !== 0) throw new Error(ran.stderr);
}

/**
 * `terraform apply` in `dir`, each variable as TF_VAR_<name>, into a state file
 * of its own (so applies can run side by side); throws with terraform's
 * stderr on failure, else returns the state. As upstream, the workspace's
 * CODER_AGENT_URL and CODER_WORKSPACE_NAME do not reach the provider.
 */
export async function runTerraformApply(
  dir: string,
  vars: Readonly<Record<string, JsonValue>>,
  customEnv: Record<string, string> = {},
): Promise<TerraformState> {
  const stateFile = `${dir}/${randomUUID()}.tfstate`;
  const env: NodeJS.ProcessEnv = { ...process.env, ...customEnv };
  delete env.CODER_AGENT_URL;
  delete env.CODER_WORKSPACE_NAME;
  for (const [name, value] of Object.entries(vars)) if (value !== null) env[`TF_VAR_${name}`] = String(value);
  const ran = await terraform(
    ["apply", "-compact-warnings", "-input=false", "-auto-approve", "-no-color", "-state", stateFile],
    dir,
    env,
  );
  if (ran.code !== 0) throw new Error(ran.stderr);
  const state = JSON.parse(await readFile(stateFile, "utf8")) as TerraformState;
  await rm(stateFile);
  return state;
}

/** One test that applies with `vars`, and one per variable that the apply fails without it. */
export function testRequiredVariables(dir: string, vars: Readonly<Record<string, JsonValue>>): void {
  it("required variables", async () => {
    await runTerraformApply(dir, vars);
  });
  for (const name of Object.keys(vars))
    it(`missing variable: ${name}`, async () => {
      const others = Object.fromEntries(Object.entries(vars).filter(([other]) => other !== name));
      try {
        await runTerraformApply(dir, others);
      } catch (error) {
        expect((error as Error).message).toContain(`input variable "${name}" is not set`);
        return;
      }
      throw new Error(`${name} is not a required variable!`);
    });
}

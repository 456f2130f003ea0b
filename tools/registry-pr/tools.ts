// Where the checks' programs are (.tools/env.sh, written by tools/setup.sh), and how the
// registry's prettier is called.
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root: this file runs from tools/registry-pr/ or bundled into .tmp/. */
export const repoRoot = path.resolve(here, path.basename(here) === "registry-pr" ? "../.." : "..");
export const configDir = path.join(repoRoot, "tools", "registry-pr");

export interface Tools {
  tf: string;
  shellcheck: string;
  /** .tools/registry-pr/node_modules: prettier, prettier-plugin-sh, the tokenizer. */
  modules: string;
  typos: string;
  bun: string;
  /** Why a tool is missing, by name. */
  missing: Map<string, string>;
}

export function toolsFromEnv(env: NodeJS.ProcessEnv = process.env): Tools {
  const missing = new Map<string, string>();
  const need = (name: string, value: string | undefined, skip: string | undefined) => {
    if (!value) missing.set(name, skip || "not in .tools/env.sh: run tools/setup.sh");
    return value ?? "";
  };
  return {
    tf: need("terraform", env.TF, undefined),
    shellcheck: need("shellcheck", env.SHELLCHECK, undefined),
    modules: need("prettier", env.REGISTRY_PR_MODULES, env.REGISTRY_PR_SKIP),
    typos: need("typos", env.TYPOS_BIN, env.TYPOS_SKIP),
    bun: need("bun", env.BUN_BIN, env.BUN_SKIP),
    missing,
  };
}

/**
 * The arguments that run prettier as coder/registry's `bun fmt:ci` does: its package.json
 * "prettier" key sets nothing but the two plugins, and it has no .editorconfig.
 */
export function prettierArgs(tools: Tools, pkg = "prettier"): { program: string; args: string[] } {
  return {
    program: path.join(tools.modules, pkg, "bin", "prettier.cjs"),
    args: [
      "--no-config",
      "--no-editorconfig",
      `--ignore-path=${path.join(configDir, "prettierignore")}`,
      `--plugin=${path.join(tools.modules, "prettier-plugin-sh", "lib", "index.js")}`,
      `--plugin=${path.join(configDir, "prettier-plugin-terraform.mjs")}`,
    ],
  };
}

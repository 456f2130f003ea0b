// Where things are: the repository (found from this file, so it also works
// from a bundle under .tmp/), the Goose test double, the scratch folder, and
// the toolchain tools/setup.sh installs (.tools/env.sh exports its paths).
import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json")) && existsSync(path.join(dir, "test", "goose-double"))) return dir;
    if (path.dirname(dir) === dir)
      throw new Error(`cannot find the repository (a folder with package.json and test/goose-double) above ${start}`);
  }
}

export const repoRoot = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));
export const gooseDoubleDir = path.join(repoRoot, "test", "goose-double");
/** The Goose test double: an executable named `goose`, alone in its folder with its docs. */
export const GOOSE_DOUBLE = path.join(gooseDoubleDir, "goose");
/**
 * The folder holding `coder`, the stand-in for the Coder CLI's `coder exp mcp
 * server` (support/coder-cli/README.md): a Coder agent puts its own `coder`
 * on its scripts' PATH, and the module's Goose starts it as an extension.
 */
export const coderCliStandinDir = path.join(repoRoot, "support", "coder-cli");
/** Git-ignored; every throwaway folder lives here. */
export const scratchRoot = path.join(repoRoot, ".tmp");

export async function scratchDir(prefix: string): Promise<string> {
  await mkdir(scratchRoot, { recursive: true });
  return mkdtemp(path.join(scratchRoot, `${prefix}-`));
}

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run through \`npm test\` / \`npm run lifecycle\` (or source .tools/env.sh after tools/setup.sh).`,
    );
  return value;
}

export const tools = {
  get terraform() {
    return required("TF");
  },
  get agentapiNew() {
    return required("AGENTAPI_BIN_NEW");
  },
  get agentapiNewVersion() {
    return required("AGENTAPI_VERSION_NEW");
  },
  /** The AgentAPI a matrix cell runs (WORKSPACE_AGENTAPI), else the module's default. */
  get agentapiUnderTest() {
    return process.env.WORKSPACE_AGENTAPI || required("AGENTAPI_BIN_NEW");
  },
  get agentapiOld() {
    return required("AGENTAPI_BIN_OLD");
  },
  get agentapiOldVersion() {
    return required("AGENTAPI_VERSION_OLD");
  },
  /** The newest and the oldest (with data "coder_task") coder provider release in the local mirror (.tools/providers). */
  get coderProviderNewest() {
    return required("CODER_PROVIDER_NEWEST");
  },
  get coderProviderOldest() {
    return required("CODER_PROVIDER_OLDEST");
  },
  /** The module's own minimum, below data "coder_task" (tools/setup.sh). */
  get coderProviderModuleMin() {
    return required("CODER_PROVIDER_MODULE_MIN");
  },
  /** The coder provider release every render pins (the newest, unless a matrix cell sets another). */
  get coderProviderVersion() {
    return required("CODER_PROVIDER_VERSION");
  },
};

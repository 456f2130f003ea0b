import path from "node:path";
import { commandPath } from "../lib/exec.js";
import { StepError } from "../lib/log.js";
import type { ModulePaths, StartConfig } from "../settings/config.js";

/**
 * Where the module's commands are looked for: the module's bin folder and
 * ~/.local/bin (where Goose's installer and the module put goose) before the
 * agent's PATH. The install and the start share it, so the start finds the
 * binaries the install script left.
 */
export function toolSearch(paths: ModulePaths, home: string, env: NodeJS.ProcessEnv = process.env) {
  const localBin = path.join(home, ".local", "bin");
  const basePath = env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
  const pathPrefix = [paths.bin, localBin];
  return { localBin, basePath, pathPrefix, scriptPath: [...pathPrefix, basePath].join(":") };
}

/**
 * The binaries the install script left, found as it found them: the module's
 * own agentapi (or the one on PATH with install_agentapi = false), and the
 * first goose along the install's search path (install/install.ts,
 * ensureGoose). Nothing the install wrote decides which file runs.
 */
export async function installedTools(
  config: StartConfig,
  paths: ModulePaths,
  home: string,
): Promise<{ agentapi: string; gooseBin: string; pathPrefix: string[] }> {
  const search = toolSearch(paths, home);
  const [agentapi, gooseBin] = await Promise.all([
    config.agentapi.install ? commandPath(path.join(paths.bin, "agentapi")) : commandPath("agentapi", search.basePath),
    commandPath("goose", `${search.localBin}:${search.scriptPath}`),
  ]);
  if (agentapi === null || gooseBin === null)
    throw new StepError(
      `${agentapi === null ? "agentapi" : "goose"} is not installed. See the install script's log (${path.join(paths.logs, "install.log")}) for why; restart the workspace to run it again.`,
    );
  return { agentapi, gooseBin, pathPrefix: search.pathPrefix };
}

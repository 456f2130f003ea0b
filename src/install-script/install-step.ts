import { moduleExtensions } from "../goose/goose-config.js";
import { configureGoose, describeOutcome, gooseConfigDir } from "../goose/setup.js";
import { describeGooseVersion } from "../goose/versions.js";
import { ensureAgentapi, ensureGoose } from "../install/install.js";
import { toolSearch } from "../install/tool-paths.js";
import { runUserScript } from "../install/user-scripts.js";
import type { VersionAsker } from "../install/version-memo.js";
import { commandPath } from "../lib/exec.js";
import { log, phase, warn } from "../lib/log.js";
import { sideBySide } from "../lib/side-by-side.js";
import { retirePredecessor } from "../predecessor/retire.js";
import type { ModulePaths, StartConfig } from "../settings/config.js";

/**
 * pre_install_script, the AgentAPI and Goose installs, Goose's config (after
 * setting aside what coder/goose 3.x left there), then post_install_script
 * (so it can adjust that config). `envSystemPrompt`: GOOSE_SYSTEM_PROMPT from
 * the agent's environment, which 3.x wrote to .goosehints. `versions` asks
 * (or recalls) each binary's `--version`. Returns the agentapi to run.
 */
export async function installAndConfigure(
  config: StartConfig,
  paths: ModulePaths,
  home: string,
  versions: VersionAsker,
  envSystemPrompt?: string,
): Promise<string> {
  const goose = config.goose;
  const { localBin, basePath, scriptPath } = toolSearch(paths, home);
  const scriptEnv = { ...process.env, PATH: scriptPath };
  const shell = (await commandPath("bash", basePath)) ?? "/bin/sh";
  const scriptOpts = { scriptsDir: paths.scripts, logsDir: paths.logs, cwd: config.folder, env: scriptEnv, shell };

  await phase("pre-install", () => runUserScript("pre_install", goose.installScript.pre, scriptOpts));
  const installed = await phase("install", async () => {
    // Two binaries, two folders, two downloads: each check (`--version`, a
    // SHA-256) or download runs beside the other's.
    const [agentapi, gooseInstall] = await sideBySide([
      ensureAgentapi({
        install: config.agentapi.install,
        version: config.agentapi.version,
        baseUrl: config.agentapi.downloadUrl,
        sha256: { variable: "agentapi_sha256", pins: config.agentapi.sha256 },
        binDir: paths.bin,
        pathValue: basePath,
        env: process.env,
        versions,
      }),
      ensureGoose({
        install: goose.install,
        confined: goose.commandPrefix.length > 0,
        version: goose.version,
        downloadUrl: goose.downloadUrl,
        installerUrl: goose.installerUrl,
        sha256: { variable: "goose_sha256", pins: goose.sha256 },
        binDir: localBin,
        workDir: paths.bin,
        pathValue: scriptEnv.PATH,
        scriptsDir: paths.scripts,
        logsDir: paths.logs,
        env: scriptEnv,
        versions,
      }),
    ]);
    log(`downloads: agentapi ${agentapi.download}; goose ${gooseInstall.download}`);
    log(describeGooseVersion(gooseInstall.version));
    return agentapi.bin;
  });
  await phase("configure", async () => {
    const { port } = config.agentapi;
    const predecessor = await retirePredecessor({
      home,
      configDir: gooseConfigDir(process.env, home),
      view: {
        port,
        appSlug: goose.appSlug,
        names: [...moduleExtensions(port, goose.appSlug, goose.extensions).wanted.keys()],
      },
      systemPrompt: goose.systemPrompt,
      envSystemPrompt,
    });
    for (const line of predecessor.lines) log(line);
    for (const warning of predecessor.warnings) warn(warning);
    const outcome = await configureGoose(goose, {
      port: config.agentapi.port,
      env: process.env,
      home,
      layerFile: paths.gooseLayer,
    });
    log(`goose config layer: ${describeOutcome(outcome.config)}; hints: ${describeOutcome(outcome.hints)}`);
    for (const warning of outcome.warnings) warn(warning);
  });
  await phase("post-install", () => runUserScript("post_install", goose.installScript.post, scriptOpts));
  return installed;
}

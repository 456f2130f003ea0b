import path from "node:path";
import { findRunningAgentapi } from "./agentapi/server.js";
import { readVersionMemo, VersionAsker, writeVersionMemo } from "./install/version-memo.js";
import { installAndConfigure } from "./install-script/install-step.js";
import { ensurePortFree, prepareFolders } from "./launch/start-checks.js";
import { keepLogIn, log, phase, reportFatal } from "./lib/log.js";
import { portHolderIfTaken } from "./lib/port-owner.js";
import { recordInstallDone } from "./lifecycle/install-done.js";
import { applyPromptSources } from "./predecessor/prompt-env.js";
import { homeDir, parseStartConfig, takeScriptInputs } from "./settings/config.js";

// The install script: the template's pre_install_script, the AgentAPI and
// Goose installs, Goose's config, then post_install_script. The start script
// runs after it (the coder_scripts' wrapper orders the two) and launches what
// it left.
async function main(): Promise<void> {
  const { settings, run } = takeScriptInputs();
  const home = homeDir();
  const prompts = applyPromptSources(parseStartConfig(settings, home));
  const { config } = prompts;
  const { paths } = config;
  const { port } = config.agentapi;
  // A taken port fails the install before any download or user script.
  const portHolder = portHolderIfTaken(port);
  portHolder.catch(() => undefined); // read below, unless the install ends first
  await phase("install-folders", () => prepareFolders(paths, config.folder));
  keepLogIn(path.join(paths.logs, "install.log"));
  const running = await findRunningAgentapi(paths.pidFile, port);
  if (running.status === "running") {
    log(`AgentAPI is already running (PID ${running.pid}); nothing is installed or configured under it`);
    return done(paths.dir, run);
  }
  await phase("install-port", () => ensurePortFree(port, portHolder));
  const versions = new VersionAsker(await readVersionMemo(paths.versionMemo), process.env);
  await installAndConfigure(config, paths, home, versions, prompts.envSystemPrompt);
  await writeVersionMemo(paths.versionMemo, versions.answers, versions.held);
  await done(paths.dir, run);
}

/** Tells the start the install went well, as this script's last step (lifecycle/install-done.ts). */
async function done(dir: string, run: string | null): Promise<void> {
  if (run !== null) await recordInstallDone(dir, run);
}

main().then(
  () => process.exit(0),
  (error) => reportFatal(error),
);

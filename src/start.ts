import path from "node:path";
import { decidePersistence } from "./agentapi/persistence-gate.js";
import { installedTools } from "./install/tool-paths.js";
import { readVersionMemo, recalledVersion } from "./install/version-memo.js";
import { launchGoose } from "./launch/launch.js";
import { ensurePortFree, reuseRunningAgentapi } from "./launch/start-checks.js";
import { holdLogLines, keepLogIn, log, phase, reportFatal, StepError, warn } from "./lib/log.js";
import { portHolderIfTaken } from "./lib/port-owner.js";
import { stopCount } from "./lifecycle/stop-request.js";
import { applyPromptSources } from "./predecessor/prompt-env.js";
import { homeDir, parseStartConfig, takeScriptInputs } from "./settings/config.js";
import { waitForInstall } from "./start/install-wait.js";
import { startSupervisor } from "./start/start-supervisor.js";
import { lastGiveUp, supervisorHelper } from "./supervisor/process.js";
import { autosaveMain, restartMain } from "./supervisor/supervisor.js";

async function main(): Promise<void> {
  const startedAt = Date.now();
  holdLogLines(); // for logs/start.log, which the install's folders hold
  const { settings, ownScript, stopsSeen: seenAtBoot, run } = takeScriptInputs();
  const home = homeDir();
  const prompts = applyPromptSources(parseStartConfig(settings, home));
  const { config } = prompts;
  const { paths } = config;
  const { port } = config.agentapi;
  if (run === null)
    throw new StepError(
      "no agent run given (CODER_MODULE_RUN is not set); run this script through the module's coder_script.",
    );
  // The install script runs beside this start: what needs nothing of it is
  // done meanwhile, and nothing it leaves is read before it has ended well.
  const installed = waitForInstall(paths.dir, run, config.displayName);
  installed.catch(() => undefined); // awaited below, unless the start ends first
  // Before anything else: a stop that counts itself from now on wins over this
  // start; from when the wrapper began, when it says.
  const stopsSeen = seenAtBoot ?? (await stopCount(paths.dir));

  // Who holds the port is looked up beside the check for a running AgentAPI;
  // the answer counts only when none of this module's runs there.
  const portHolder = portHolderIfTaken(port);
  portHolder.catch(() => undefined); // read below, unless the start ends first
  if (await reuseRunningAgentapi(paths, port)) return void (await installed);
  for (const line of prompts.lines) log(line);
  const gaveUp = await lastGiveUp(paths);
  if (gaveUp !== null) warn(`the supervisor of the last run gave up: ${gaveUp}`);
  await phase("port", () => ensurePortFree(port, portHolder));
  await phase("install-wait", () => installed);
  keepLogIn(path.join(paths.logs, "start.log"));
  // What the install script left (it ran before this script).
  const tools = await installedTools(config, paths, home);
  // Not awaited here: launchGoose asks Goose about its sessions meanwhile.
  const gating = phase("version-gate", async () =>
    decidePersistence(
      tools.agentapi,
      config.agentapi.persistence,
      await recalledVersion(await readVersionMemo(paths.versionMemo), tools.agentapi),
    ),
  );
  const { gate, launched, containment } = await launchGoose({
    config,
    tools,
    gate: gating,
    home,
    startedAt,
    stopsSeen,
  });
  if (!launched)
    throw new StepError(
      "the workspace's stop script ran while this start was still running, so Goose is not running (the stop wins). Start the workspace again to use Goose.",
    );
  if (config.supervise)
    await phase("supervisor", () =>
      startSupervisor({ config, settings, tools, gate, startedAt, stopsSeen, containment, own: ownScript() }),
    );
}

// The supervisor starts this same script again, with the arguments that name
// a restart or an autosave (supervisor/process.ts).
const helper = supervisorHelper();
const run =
  helper === null ? main().then(() => 0) : helper.mode === "restart" ? restartMain(helper.watched) : autosaveMain();
run.then(
  (code) => process.exit(code),
  (error) => reportFatal(error),
);

import { homeDir, readSettings, resolvePaths, type StartConfig } from "./config.js";
import { log, phase, reportFatal, warn } from "./log.js";
import { buildAgentapiArgs, buildGooseArgs, buildLaunchEnv, type PersistenceFiles } from "./commands.js";
import { prepareFolders, ensurePortFree, reuseRunningAgentapi } from "./start-checks.js";
import { installAndConfigure } from "./start-install.js";
import { decidePersistence } from "./persistence-gate.js";
import { decideLaunch } from "./start-decision.js";
import { prepareState, writePromptFile } from "./state-prep.js";
import { launchAgentapi } from "./launch.js";
import { writeLaunchRecord } from "./launch-record.js";

async function main(): Promise<void> {
  const startedAt = Date.now();
  const config = readSettings<StartConfig>();
  const home = homeDir();
  const paths = resolvePaths(home, config.module_folder, config.agentapi);
  const goose = config.agent;
  const { port } = config.agentapi;

  await phase("prepare", () => prepareFolders(paths, config.folder));
  if (await reuseRunningAgentapi(paths, port)) return;
  await phase("port", () => ensurePortFree(port));
  const { agentapi, gooseBin, pathPrefix } = await installAndConfigure(config, paths, home);

  const gate = await phase("version-gate", () => decidePersistence(agentapi, config.agentapi.persistence));
  log(`state persistence ${gate.enabled ? "on" : "off"}: ${gate.reason}`);
  if (gate.warning) warn(gate.warning);
  const persistence: PersistenceFiles | null = gate.enabled ? { stateFile: paths.stateFile, pidFile: paths.pidFile } : null;
  const launchEnv = buildLaunchEnv(process.env, { chatBasePath: config.agentapi.chat_base_path, persistence, provider: goose.provider, model: goose.model, pathPrefix });

  const plan = await phase("decide", () => decideLaunch({ goose, gooseBin, env: launchEnv, home, folder: config.folder, paths }));
  const stateBackup = persistence ? await prepareState(paths, plan) : null;
  const promptFile = plan.decision.mode === "cold" ? await writePromptFile(paths, goose.prompt) : null;
  if (plan.decision.mode === "warm" && goose.prompt.trim() !== "") log("task prompt not sent again: the resumed session already holds the conversation");

  const gooseArgs = buildGooseArgs(plan.decision.mode, goose.session_name, promptFile, plan.turn.action === "continue");
  const args = buildAgentapiArgs({ port, persistence, goose: gooseBin, gooseArgs });
  await writeLaunchRecord(paths.launchRecord, {
    persistence: gate.enabled,
    persistence_reason: gate.reason,
    agentapi_binary: agentapi,
    agentapi_version: gate.version,
    port,
    state_file: paths.stateFile,
    state_backup: stateBackup,
    pid_file: paths.pidFile,
    session_name: goose.session_name,
    mode: plan.decision.mode,
    interrupted_turn: plan.turn,
    started_at: new Date(startedAt).toISOString(),
  });

  await phase("launch", () =>
    launchAgentapi({ binary: agentapi, args, env: launchEnv, cwd: config.folder, port, paths, startedAt, persistence: gate.enabled, stateBackup }),
  );
}

main().then(
  () => process.exit(0),
  (error) => reportFatal(error),
);

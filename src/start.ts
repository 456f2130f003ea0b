import { decideAccess } from "./access-lists.js";
import { buildAgentapiArgs, buildGooseArgs, buildLaunchEnv, type PersistenceFiles } from "./commands.js";
import { homeDir, parseStartConfig, readSettingsDocument } from "./config.js";
import { launchAgentapi } from "./launch.js";
import { writeLaunchRecord } from "./launch-record.js";
import { phase, reportFatal } from "./log.js";
import { decidePersistence } from "./persistence-gate.js";
import { ensurePortFree, prepareFolders, reuseRunningAgentapi } from "./start-checks.js";
import { decideLaunch } from "./start-decision.js";
import { installAndConfigure } from "./start-install.js";
import { prepareState } from "./state-prep.js";
import { writePromptFile } from "./task-prompt.js";

async function main(): Promise<void> {
  const startedAt = Date.now();
  const home = homeDir();
  const config = parseStartConfig(readSettingsDocument(), home);
  const { paths } = config;
  const goose = config.agent;
  const { port } = config.agentapi;

  await phase("prepare", () => prepareFolders(paths, config.folder));
  if (await reuseRunningAgentapi(paths, port)) return;
  await phase("port", () => ensurePortFree(port));
  const { agentapi, gooseBin, pathPrefix } = await installAndConfigure(config, paths, home);

  const access = decideAccess(config.access, { port, appSlug: goose.app_slug }, process.env);
  const envWith = (persistence: PersistenceFiles | null) =>
    buildLaunchEnv(process.env, {
      chatBasePath: config.agentapi.chat_base_path,
      persistence,
      allowedHosts: access.hosts,
      allowedOrigins: access.origins,
      provider: goose.provider,
      model: goose.model,
      mode: goose.mode,
      pathPrefix,
    });
  // Independent, so at the same time. Goose's helpers get the launch
  // environment without AgentAPI's own state variables, which Goose never
  // reads, so they need not wait for the gate.
  const [gate, plan] = await Promise.all([
    phase("version-gate", () => decidePersistence(agentapi, config.agentapi.persistence)),
    phase("decide", () => decideLaunch({ goose, gooseBin, env: envWith(null), home, folder: config.folder, paths })),
  ]);
  const persistence: PersistenceFiles | null = gate.enabled
    ? { stateFile: paths.stateFile, pidFile: paths.pidFile }
    : null;
  const launchEnv = envWith(persistence);
  const stateBackup = persistence ? await prepareState(paths, plan) : null;
  const promptFile = await writePromptFile(paths.promptFile, goose.prompt, plan.decision.mode);
  const gooseArgs = buildGooseArgs(plan.decision.mode, goose.session_name, promptFile, plan.turn.action === "continue");
  const args = buildAgentapiArgs({ port, persistence, goose: gooseBin, gooseArgs });
  await writeLaunchRecord(paths.launchRecord, { gate, binary: agentapi, port, paths, stateBackup, plan, startedAt });
  await phase("launch", () =>
    launchAgentapi({
      binary: agentapi,
      args,
      env: launchEnv,
      cwd: config.folder,
      port,
      paths,
      startedAt,
      persistence: gate.enabled,
      stateBackup,
      gooseMode: goose.mode,
    }),
  );
}

main().then(
  () => process.exit(0),
  (error) => reportFatal(error),
);

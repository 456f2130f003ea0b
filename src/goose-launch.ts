import { decideAccess } from "./access-lists.js";
import { buildAgentapiArgs, buildGooseArgs, buildLaunchEnv, type PersistenceFiles } from "./commands.js";
import type { StartConfig } from "./config.js";
import { expandHome, gatewayEnv } from "./governance.js";
import { launchAgentapi } from "./launch.js";
import { writeLaunchRecord } from "./launch-record.js";
import { phase } from "./log.js";
import { decideLaunch, type LaunchPlan } from "./start-decision.js";
import { prepareState } from "./state-prep.js";
import { writePromptFile } from "./task-prompt.js";
import type { DecidedGate } from "./version-gate.js";

/** What the install step found or installed: the binaries and the folders put first on PATH. */
export interface InstalledTools {
  agentapi: string;
  gooseBin: string;
  pathPrefix: string[];
}

/**
 * Everything after the installs, the same for a start and for a supervisor's
 * restart: cold or warm from Goose's own sessions, the saved chat readied, the
 * launch recorded for the stop script, then AgentAPI launched with Goose.
 * Returns the plan, and whether AgentAPI is up (false when a stop or `abort`
 * came first).
 */
export async function launchGoose(opts: {
  config: StartConfig;
  tools: InstalledTools;
  gate: DecidedGate;
  home: string;
  startedAt: number;
  abort?: () => string | undefined;
}): Promise<{ plan: LaunchPlan; launched: boolean }> {
  const { config, tools, gate, home, startedAt } = opts;
  const { paths } = config;
  const goose = config.agent;
  const { port } = config.agentapi;
  const persistence: PersistenceFiles | null = gate.enabled
    ? { stateFile: paths.stateFile, pidFile: paths.pidFile }
    : null;
  const access = decideAccess(config.access, { port, appSlug: goose.app_slug }, process.env);
  const launchEnv = buildLaunchEnv(process.env, {
    chatBasePath: config.agentapi.chat_base_path,
    persistence,
    allowedHosts: access.hosts,
    allowedOrigins: access.origins,
    provider: goose.provider,
    model: goose.model,
    mode: goose.mode,
    pathPrefix: tools.pathPrefix,
    // Read from this process's environment on every launch: a start gets the
    // coder_env of its own build, and a supervisor's restart the start's.
    gateway: gatewayEnv(goose.provider, goose.ai_gateway, process.env),
  });

  const plan = await phase("decide", () =>
    decideLaunch({ goose, gooseBin: tools.gooseBin, env: launchEnv, home, folder: config.folder, paths }),
  );
  const stateBackup = persistence ? await prepareState(paths, plan) : null;
  const promptFile = await writePromptFile(paths.promptFile, goose.prompt, plan.decision.mode);
  const gooseArgs = buildGooseArgs(plan.decision.mode, goose.session_name, promptFile, plan.turn.action === "continue");
  const args = buildAgentapiArgs({
    port,
    persistence,
    goose: tools.gooseBin,
    gooseArgs,
    prefix: expandHome(goose.command_prefix, home),
  });
  await writeLaunchRecord(paths.launchRecord, {
    gate,
    binary: tools.agentapi,
    port,
    paths,
    stateBackup,
    plan,
    startedAt,
  });
  const launched = await phase("launch", () =>
    launchAgentapi({
      binary: tools.agentapi,
      args,
      env: launchEnv,
      cwd: config.folder,
      port,
      paths,
      startedAt,
      persistence: gate.enabled,
      stateBackup,
      gooseMode: goose.mode,
      abort: opts.abort,
    }),
  );
  return { plan, launched };
}

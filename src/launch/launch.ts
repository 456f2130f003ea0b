import { buildAgentapiArgs, type PersistenceFiles } from "../agentapi/command.js";
import type { DecidedGate } from "../agentapi/version-gate.js";
import { AGENTAPI_TYPE, buildGooseArgs, buildLaunchEnv, type GooseSession, withUserTmpdir } from "../goose/commands.js";
import { expandHome, gatewayEnv } from "../goose/governance.js";
import { writePromptFile } from "../goose/task-prompt.js";
import { telemetryEnv } from "../goose/telemetry.js";
import { phase, warn } from "../lib/log.js";
import { writeLaunchRecord } from "../lifecycle/launch-record.js";
import { runMark } from "../lifecycle/leftovers.js";
import { decideAccess } from "../settings/access-lists.js";
import type { StartConfig } from "../settings/config.js";
import { launchAgentapi } from "./agentapi-process.js";
import { checkContainment, containmentFiles, type Measured, measure, writableWarning } from "./containment.js";
import { type LaunchPlan, planLaunch, prepareSavedChat } from "./launch-plan.js";

/** The turn Goose starts with by itself (buildGooseArgs), as the log names it: a task's prompt, or ai_prompt's. */
function firstTurnOf(plan: LaunchPlan, promptFile: string | null, taskId: string): string | undefined {
  if (plan.decision.mode === "warm") return plan.turn.action === "continue" ? "the interrupted turn" : undefined;
  if (promptFile === null) return undefined;
  return taskId !== "" ? "the task prompt" : "the first prompt";
}

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
 * `gate` may still be running (the start's version gate): the decision runs
 * beside it. `restart` marks the supervisor's restarts (decideSession says what
 * changes). Returns the gate, the plan, and whether AgentAPI is up (false when
 * a stop or `abort` came first).
 */
export async function launchGoose(opts: {
  config: StartConfig;
  tools: InstalledTools;
  gate: DecidedGate | Promise<DecidedGate>;
  home: string;
  startedAt: number;
  restart?: boolean;
  /** The stop count when this start began (lifecycle/stop-request.ts). */
  stopsSeen: number;
  abort?: () => string | undefined;
  /** At a supervisor's restart: what the start measured (containment.ts), checked before anything runs. */
  verified?: Measured[];
}): Promise<{ gate: DecidedGate; plan: LaunchPlan; launched: boolean; containment: Measured[] }> {
  const { config, tools, home, startedAt } = opts;
  const { paths } = config;
  const goose = config.goose;
  const { port } = config.agentapi;
  const access = decideAccess(config.access, { port, appSlug: goose.appSlug }, process.env);
  // With enable_ai_gateway the owner's session token arrives in this
  // process's environment as the coder_env aiGateway.tokenEnv, read on every
  // launch: a start gets the coder_env of its own build, and a supervisor's
  // restart the start's (the supervisor keeps it in its environment, never in
  // a file). AgentAPI and Goose get it once, as the provider's key, since
  // AgentAPI hands its environment to the command it starts; Goose's helpers
  // (session list, export) need no key and get none.
  const gateway = gatewayEnv(goose.provider, goose.aiGateway, process.env);
  const base: NodeJS.ProcessEnv = { ...process.env, [goose.aiGateway.tokenEnv]: undefined };
  const envWith = (forAgentapi: boolean) =>
    buildLaunchEnv(base, {
      chatBasePath: config.agentapi.chatBasePath,
      allowedHosts: access.hosts,
      allowedOrigins: access.origins,
      provider: goose.provider,
      model: goose.model,
      mode: goose.mode,
      pathPrefix: tools.pathPrefix,
      // Only AgentAPI's own run gets the module's TMPDIR (the helpers keep the
      // user's), the gateway's key and the telemetry settings (both for the
      // Goose it starts).
      gateway: forAgentapi ? gateway : null,
      telemetry: forAgentapi ? telemetryEnv(goose.telemetry) : {},
      tmpdir: forAgentapi ? paths.tmp : undefined,
      configLayer: paths.gooseLayer,
    });

  // Before any of them runs: goose's session helpers run outside the firewall.
  const containment = await confinement(opts, envWith(false).PATH ?? "");

  // AgentAPI's version and Goose's sessions are independent questions to two
  // binaries, so they are asked at once: the environment does not depend on
  // the gate (the state files reach AgentAPI as flags, buildAgentapiArgs).
  const [gate, plan] = await Promise.all([
    opts.gate,
    phase("decide", () =>
      planLaunch({
        goose,
        gooseBin: tools.gooseBin,
        env: envWith(false),
        home,
        folder: config.folder,
        paths,
        restart: opts.restart === true,
      }),
    ),
  ]);
  const persistence: PersistenceFiles | null = gate.enabled
    ? { stateFile: paths.stateFile, pidFile: paths.pidFile }
    : null;
  const launchEnv = { ...envWith(true), ...runMark(paths.dir) };
  const stateBackup = persistence ? await prepareSavedChat(paths, plan) : null;
  const promptFile = await writePromptFile(paths.promptFile, goose.prompt, plan.decision.mode);
  const session: GooseSession =
    plan.decision.mode === "warm" && plan.probe.kind === "found"
      ? { mode: "warm", id: plan.probe.id }
      : { mode: "cold", name: goose.sessionName };
  const gooseArgs = buildGooseArgs(session, promptFile, plan.turn.action === "continue");
  const args = buildAgentapiArgs({
    port,
    persistence,
    type: AGENTAPI_TYPE,
    agent: tools.gooseBin,
    agentArgs: gooseArgs,
    prefix: withUserTmpdir(expandHome(goose.commandPrefix, home), tools.gooseBin, process.env.TMPDIR),
  });
  await writeLaunchRecord(paths.launchRecord, {
    persistence: gate.enabled,
    persistence_reason: gate.reason,
    agentapi_binary: tools.agentapi,
    agentapi_version: gate.version,
    port,
    state_file: paths.stateFile,
    state_backup: stateBackup,
    pid_file: paths.pidFile,
    session_name: plan.sessionName,
    mode: plan.decision.mode,
    interrupted_turn: plan.turn,
    started_at: new Date(startedAt).toISOString(),
    goose: plan.goose,
  });
  const launched = await phase("launch", () =>
    launchAgentapi({
      binary: tools.agentapi,
      args,
      env: launchEnv,
      cwd: config.folder,
      port,
      paths,
      stopsSeen: opts.stopsSeen,
      persistence: gate.enabled,
      stateBackup,
      gooseMode: goose.mode,
      firstTurn: firstTurnOf(plan, promptFile, config.taskId),
      abort: opts.abort,
    }),
  );
  return { gate, plan, launched, containment };
}

/**
 * A restart checks the start's measurements and throws on any change; a
 * start measures, and says which of the firewall's files the workspace user
 * can rewrite.
 */
async function confinement(
  opts: { config: StartConfig; tools: InstalledTools; home: string; verified?: Measured[] },
  pathValue: string,
): Promise<Measured[]> {
  const uid = process.getuid?.() ?? -1;
  if (opts.verified !== undefined) {
    await checkContainment(opts.verified, uid);
    return opts.verified;
  }
  const { config, tools } = opts;
  const prefix = expandHome(config.goose.commandPrefix, opts.home);
  const files = await containmentFiles({
    prefix,
    agentapi: tools.agentapi,
    goose: tools.gooseBin,
    runtime: process.execPath,
    pathValue,
    pinned: {
      agentapi: config.agentapi.install && Object.keys(config.agentapi.sha256).length > 0,
      goose: config.goose.install && config.goose.installerUrl === "" && Object.keys(config.goose.sha256).length > 0,
    },
  });
  const measured = await measure(files, uid);
  const warning = prefix.length > 0 ? writableWarning(measured) : null;
  if (warning !== null) warn(warning);
  return measured;
}

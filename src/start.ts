import { copyFile, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { $ } from "zx/core";
import { homeDir, readJsonConfig, resolvePaths, type ModulePaths, type StartConfig } from "./config.js";
import { readOptional } from "./files.js";
import { StepError, log, phase, reportFatal, warn } from "./log.js";
import { configureShell, commandPath } from "./shell.js";
import { runUserScript, logTail } from "./user-scripts.js";
import { ensureAgentapi, ensureGoose } from "./install.js";
import { configureGoose } from "./goose-setup.js";
import { gateOnHelp, gateOnVersion } from "./version-gate.js";
import { probeSession } from "./goose-sessions.js";
import { decideStart, type StartDecision } from "./session-decision.js";
import { summarizeState, type StateSummary } from "./state-file.js";
import { buildAgentapiArgs, buildGooseArgs, buildLaunchEnv, type PersistenceFiles } from "./commands.js";
import { findRunningAgentapi } from "./process-info.js";
import { settle, spawnAgentapi, waitForReady, writePidFile } from "./launch.js";
import { writeLaunchRecord } from "./launch-record.js";

// AgentAPI itself answers within a second; the bound covers slow disks.
const READY_TIMEOUT_MS = 60_000;
// Long enough for a Goose that cannot start to exit, short enough not to hold
// up a workspace whose Goose loads slow extensions.
const SETTLE_TIMEOUT_MS = 15_000;

async function decidePersistence(binary: string, requested: boolean) {
  const version = await $({ nothrow: true, quiet: true, timeout: "20s" })`${binary} --version`;
  const gate = gateOnVersion(requested, version.exitCode === 0 ? version.stdout : null);
  if (gate.kind === "decided") return gate;
  const help = await $({ nothrow: true, quiet: true, timeout: "20s" })`${binary} server --help`;
  return gateOnHelp(gate, help.exitCode === 0 ? help.stdout + help.stderr : null);
}

/** Moves a state file aside without deleting it, so nothing the user had is lost. */
async function setStateAside(paths: ModulePaths, why: string): Promise<void> {
  const kept = `${paths.stateFile}.set-aside-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  await rename(paths.stateFile, kept);
  await rm(paths.stateBackup, { force: true });
  warn(`${why}; moved ${paths.stateFile} to ${kept} so the dashboard does not show a history Goose cannot remember`);
}

async function prepareState(paths: ModulePaths, decision: StartDecision, state: StateSummary): Promise<string | null> {
  await rm(`${paths.stateFile}.tmp`, { force: true });
  if (decision.state === "set-aside") {
    await setStateAside(paths, decision.stateReason ?? "stale AgentAPI state");
    return null;
  }
  if (decision.state === "keep" && state.kind === "valid") {
    // The stop script restores this copy if AgentAPI is stopped before it has
    // loaded the saved chat and overwrites it with a near-empty one.
    await copyFile(paths.stateFile, paths.stateBackup);
    log(`AgentAPI state: ${state.messages} message(s) kept; backup at ${paths.stateBackup}`);
    return paths.stateBackup;
  }
  await rm(paths.stateBackup, { force: true });
  return null;
}

async function main(): Promise<void> {
  const config = await readJsonConfig<StartConfig>(process.argv[2]);
  const home = homeDir();
  const paths = resolvePaths(home, config.module_folder, config.agentapi);
  const goose = config.agent;
  const { port } = config.agentapi;
  await configureShell();
  for (const dir of [paths.dir, paths.logs, paths.scripts, paths.bin, path.dirname(paths.stateFile), path.dirname(paths.pidFile)]) {
    await mkdir(dir, { recursive: true });
  }
  await mkdir(config.folder, { recursive: true });

  const running = await findRunningAgentapi(paths.pidFile, port);
  if (running.status === "running") {
    log(`AgentAPI is already running (PID ${running.pid} from ${paths.pidFile}); not starting a second one`);
    const ready = await waitForReady(port, { timeoutMs: READY_TIMEOUT_MS, exited: () => undefined });
    if (!("value" in ready)) throw new StepError(`AgentAPI (PID ${running.pid}) is running but does not answer on port ${port}. See ${path.join(paths.logs, "agentapi.log")}.`);
    return;
  }
  if (running.status !== "no-file") {
    log(`removing stale PID file ${paths.pidFile} (PID ${running.pid} is ${running.status === "dead" ? "gone" : "not an AgentAPI server on this port"})`);
    await rm(paths.pidFile, { force: true });
  }

  const localBin = path.join(home, ".local", "bin");
  const basePath = process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
  const scriptEnv = { ...process.env, PATH: `${paths.bin}:${localBin}:${basePath}` };
  const shell = (await commandPath("bash")) ?? "/bin/sh";
  const scriptOpts = { scriptsDir: paths.scripts, logsDir: paths.logs, cwd: config.folder, env: scriptEnv, shell };

  await phase("pre-install", () => runUserScript("pre_install", goose.install_script.pre, scriptOpts));
  const { agentapi, gooseBin } = await phase("install", async () => ({
    agentapi: await ensureAgentapi({ install: config.agentapi.install, version: config.agentapi.version, baseUrl: config.agentapi.download_url, binDir: paths.bin, pathValue: basePath }),
    gooseBin: await ensureGoose({
      install: goose.install,
      version: goose.version,
      installerUrl: goose.installer_url,
      binDir: localBin,
      pathValue: scriptEnv.PATH,
      scriptsDir: paths.scripts,
      logsDir: paths.logs,
      env: scriptEnv,
    }),
  }));
  if (agentapi !== path.join(paths.bin, "agentapi")) {
    // The CLI app runs $MODULE_DIR/bin/agentapi whichever binary was used.
    await rm(path.join(paths.bin, "agentapi"), { force: true });
    await symlink(agentapi, path.join(paths.bin, "agentapi"));
  }
  await phase("configure", () => configureGoose(goose, { port, env: process.env, home }));
  await phase("post-install", () => runUserScript("post_install", goose.install_script.post, scriptOpts));

  const gate = await phase("version-gate", () => decidePersistence(agentapi, config.agentapi.persistence));
  if (gate.kind !== "decided") throw new StepError("internal: persistence gate undecided");
  log(`state persistence ${gate.enabled ? "on" : "off"}: ${gate.reason}`);
  if (gate.warning) warn(gate.warning);
  const persistence: PersistenceFiles | null = gate.enabled ? { stateFile: paths.stateFile, pidFile: paths.pidFile } : null;

  const launchEnv = buildLaunchEnv(process.env, {
    chatBasePath: config.agentapi.chat_base_path,
    persistence,
    provider: goose.provider,
    model: goose.model,
    pathPrefix: [paths.bin, localBin],
  });

  const { decision, stateSummary } = await phase("decide", async () => {
    const probe = goose.continue
      ? await probeSession({ goose: gooseBin, name: goose.session_name, env: launchEnv, home, cwd: config.folder })
      : ({ kind: "unknown", reason: "not checked" } as const);
    const stateSummary = summarizeState(await readOptional(paths.stateFile));
    const decision = decideStart({ continueSession: goose.continue, sessionName: goose.session_name, probe, state: stateSummary });
    log(`${decision.mode} start: ${decision.reason}`);
    if (probe.kind === "found" && decision.mode === "warm" && probe.workingDir && path.resolve(probe.workingDir) !== path.resolve(config.folder)) {
      warn(`session "${goose.session_name}" was started in ${probe.workingDir}, not ${config.folder}; Goose will ask in the chat whether to switch back`);
    }
    return { decision, stateSummary };
  });

  const stateBackup = persistence ? await prepareState(paths, decision, stateSummary) : null;
  let promptFile: string | null = null;
  if (decision.mode === "cold" && goose.prompt.trim() !== "") {
    await writeFile(paths.promptFile, goose.prompt, { mode: 0o600 });
    promptFile = paths.promptFile;
    log(`task prompt (${goose.prompt.length} characters) goes to the new session via ${promptFile}`);
  } else if (decision.mode === "warm" && goose.prompt.trim() !== "") {
    log("task prompt not sent again: the resumed session already holds the conversation");
  }

  const args = buildAgentapiArgs({ port, persistence, goose: gooseBin, gooseArgs: buildGooseArgs(decision.mode, goose.session_name, promptFile) });
  const agentLog = path.join(paths.logs, "agentapi.log");
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
    mode: decision.mode,
    started_at: new Date().toISOString(),
  });

  await phase("launch", async () => {
    const child = await spawnAgentapi({ binary: agentapi, args, env: launchEnv, cwd: config.folder, logFile: agentLog });
    let exited: string | undefined;
    child.once("exit", (code, signal) => {
      exited = `AgentAPI exited (${signal ?? `code ${code}`}) before it was ready`;
    });
    // AgentAPI before v0.12.0 writes no PID file; the stop script needs one.
    if (!persistence && child.pid) await writePidFile(paths.pidFile, child.pid);
    log(`started AgentAPI (PID ${child.pid}) on port ${port}: ${path.basename(agentapi)} ${args.slice(0, args.indexOf("--") + 2).join(" ")} ...`);
    const ready = await waitForReady(port, { timeoutMs: READY_TIMEOUT_MS, exited: () => exited });
    if (!("value" in ready)) {
      const why = "aborted" in ready ? ready.aborted : `AgentAPI did not answer on port ${port} within ${(READY_TIMEOUT_MS) / 1000} s`;
      throw new StepError(`${why}. Last lines of ${agentLog}:\n${await logTail(agentLog, 30)}`);
    }
    log(`AgentAPI answers (status: ${ready.value.status}, agent type: ${ready.value.agent_type ?? "unknown"})`);
    const settled = await settle(port, { timeoutMs: SETTLE_TIMEOUT_MS, exited: () => exited });
    if ("aborted" in settled) {
      throw new StepError(`Goose exited right after it started, and AgentAPI with it. Last lines of ${agentLog}:\n${await logTail(agentLog, 30)}`);
    }
    child.unref();
    log("value" in settled ? "Goose is ready for input" : `Goose is still starting after ${SETTLE_TIMEOUT_MS / 1000} s; it keeps starting in the background`);
  });
}

main().then(
  () => process.exit(0),
  (error) => reportFatal(error),
);

import { mkdirSync } from "node:fs";
import path from "node:path";
import { AGENTAPI_DEFAULT_PORT, findRunningAgentapi } from "../agentapi/server.js";
import { checkWritableTarget } from "../lib/atomic-write.js";
import { log, StepError } from "../lib/log.js";
import { describePortHolder } from "../lib/port-owner.js";
import { ensurePrivateDir } from "../lib/private-dirs.js";
import { removePidFile } from "../lib/processes.js";
import type { ModulePaths } from "../settings/config.js";
import { waitForReady } from "./agentapi-process.js";

/**
 * The module's own folders are private (0700) and must be the user's: a state
 * or PID folder that someone else owns or can write to could hold a planted
 * symlink that turns the module's writes against the user. The project folder
 * is the user's and gets the workspace's umask.
 */
export async function prepareFolders(paths: ModulePaths, projectFolder: string): Promise<void> {
  for (const dir of new Set([
    paths.dir,
    paths.logs,
    paths.scripts,
    paths.bin,
    path.dirname(paths.stateFile),
    path.dirname(paths.pidFile),
  ])) {
    try {
      await ensurePrivateDir(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EACCES" && code !== "EPERM" && code !== "EROFS") throw error;
      throw new StepError(
        `cannot create ${dir} (${code}): the workspace user must be able to write there. Choose a state_file_path and pid_file_path in a folder the workspace user owns.`,
      );
    }
  }
  await checkWritableTarget(paths.stateFile);
  await checkWritableTarget(paths.pidFile);
  // A clone step that has not run yet (scripts run concurrently unless the
  // template orders them) still finds an empty folder, which `git clone`
  // accepts as its target; nothing is written into it here.
  const created = mkdirSync(projectFolder, { recursive: true });
  if (created !== undefined)
    log(
      `folder ${projectFolder} did not exist; created it empty. If a clone step fills it, order Goose after the clone (see the README, "Ordering with other modules")`,
    );
}

/** True when this module's AgentAPI already runs (a second start of the same workspace): nothing more to do. */
export async function reuseRunningAgentapi(paths: ModulePaths, port: number): Promise<boolean> {
  const running = await findRunningAgentapi(paths.pidFile, port);
  if (running.status === "running") {
    log(`AgentAPI is already running (PID ${running.pid} from ${paths.pidFile}); not starting a second one`);
    const ready = await waitForReady(port, { timeoutMs: 60_000, exited: () => undefined });
    if (!("value" in ready))
      throw new StepError(
        `AgentAPI (PID ${running.pid}) is running but does not answer on port ${port}. See ${paths.agentapiLog}.`,
      );
    return true;
  }
  if (running.status !== "no-file") {
    log(
      `removing stale PID file ${paths.pidFile} (PID ${running.pid} is ${running.status === "dead" ? "gone" : "not an AgentAPI server on this port"})`,
    );
    await removePidFile(paths.pidFile, running.pid);
  }
  return false;
}

/**
 * Fails in moments, naming the holder, when another server already listens on
 * the module's port. `lookup` is describePortHolder(port) when the caller
 * started it earlier.
 */
export async function ensurePortFree(
  port: number,
  lookup: Promise<string | null> = describePortHolder(port),
): Promise<void> {
  const holder = await lookup;
  if (holder === null) return;
  throw new StepError(
    `port ${port} is already in use by ${holder}, so AgentAPI cannot listen there. ` +
      `Every AgentAPI-based module defaults to port ${AGENTAPI_DEFAULT_PORT}: give this one a free port with agentapi_port, or stop the other server.`,
  );
}

import type { DecidedGate } from "../agentapi/version-gate.js";
import type { InstalledTools } from "../launch/launch.js";
import { log, warn } from "../lib/log.js";
import { stoppedSince } from "../lifecycle/stop-request.js";
import type { StartConfig } from "../settings/config.js";
import { supervisorDocument } from "../supervisor/document.js";
import { findSupervisor, spawnSupervisor, supervisorLog } from "../supervisor/process.js";

/**
 * The start's last step: leaves one supervisor running beside AgentAPI. The
 * agent already runs, so a supervisor that cannot start is a warning, not a
 * failed start.
 */
export async function startSupervisor(opts: {
  config: StartConfig;
  tools: InstalledTools;
  gate: DecidedGate;
  startedAt: number;
  stopsSeen: number;
  code: Buffer | null;
}): Promise<void> {
  const { paths } = opts.config;
  const stopped = () => stoppedSince(paths.dir, opts.stopsSeen);
  if (await stopped()) return log("the workspace's stop script ran meanwhile; no supervisor is started");
  const running = await findSupervisor(paths.supervisorPid, paths.dir);
  if (running !== null) return log(`the supervisor (PID ${running}) already watches AgentAPI`);
  if (opts.code === null)
    return warn(
      "no supervisor: the coder_script did not pass the script's own code (CODER_MODULE_SCRIPT); re-apply the template so the coder_script is rendered again",
    );
  try {
    const pid = await spawnSupervisor({
      paths,
      code: opts.code,
      document: supervisorDocument(opts.config, opts.tools, opts.gate, {
        since: opts.startedAt,
        stops: opts.stopsSeen,
      }),
      env: process.env,
    });
    log(
      `supervisor (PID ${pid}) watches AgentAPI and restarts it if it exits without a stop; log: ${supervisorLog(paths)}`,
    );
  } catch (error) {
    if (await stopped()) return log("the workspace's stop script ran while the supervisor was starting; it left");
    warn(`the supervisor did not start, so nothing restarts AgentAPI if it exits: ${(error as Error).message}`);
  }
}

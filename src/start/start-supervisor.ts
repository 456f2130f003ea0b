import { gzipSync } from "node:zlib";
import type { DecidedGate } from "../agentapi/version-gate.js";
import { gooseSessionsDb } from "../goose/sessions.js";
import { type Measured, supervisorRefusals } from "../launch/containment.js";
import type { InstalledTools } from "../launch/launch.js";
import { LOG_LIMITS } from "../lib/command-log.js";
import { log, warn } from "../lib/log.js";
import { signal } from "../lib/processes.js";
import { stoppedSince } from "../lifecycle/stop-request.js";
import { homeDir, type OwnScript, type StartConfig } from "../settings/config.js";
import { supervisorDocument } from "../supervisor/document.js";
import {
  claimSupervisorPid,
  findSupervisor,
  gaveUpFile,
  spawnSupervisor,
  supervisorLog,
} from "../supervisor/process.js";
// esbuild's text loader (build.mjs) embeds the file.
import SUPERVISOR_SH from "../supervisor/supervisor.sh";

/**
 * The start's last step: leaves one supervisor running beside AgentAPI. The
 * agent already runs, so a supervisor that cannot start is a warning, not a
 * failed start.
 */
export async function startSupervisor(opts: {
  config: StartConfig;
  /** The settings document the start was given, which the supervisor reads again. */
  settings: unknown;
  tools: InstalledTools;
  gate: DecidedGate;
  startedAt: number;
  stopsSeen: number;
  containment: Measured[];
  /** The script's own code, gzip+base64 as the coder_script passed it, and its loader. */
  own: OwnScript | null;
}): Promise<void> {
  const { paths } = opts.config;
  const stopped = () => stoppedSince(paths.dir, opts.stopsSeen);
  if (await stopped()) return log("the workspace's stop script ran meanwhile; no supervisor is started");
  const running = await findSupervisor(paths.supervisorPid, paths.dir);
  if (running !== null) return log(`the supervisor (PID ${running}) already watches AgentAPI`);
  if (opts.own === null)
    return warn(
      "no supervisor: the coder_script did not pass the script's own code (CODER_MODULE_SCRIPT) and its loader (-e); re-apply the template so the coder_script is rendered again",
    );
  const document = supervisorDocument(opts.settings, opts.tools, opts.gate, {
    since: opts.startedAt,
    stops: opts.stopsSeen,
    containment: opts.containment,
  });
  const refused = supervisorRefusals(opts.containment, opts.config.goose.commandPrefix.length > 0);
  const autosave = opts.gate.enabled && refused.autosave === "";
  try {
    const pid = await spawnSupervisor({
      paths,
      source: SUPERVISOR_SH,
      // Inputs as data (supervisor.sh reads and unsets them); the code and
      // the document gzip+base64 encoded as the coder_script passes them.
      env: {
        ...process.env,
        CODER_MODULE_SCRIPT: opts.own.code,
        CODER_MODULE_SETTINGS: gzipSync(JSON.stringify(document)).toString("base64"),
        GOOSE_MODULE_RUNTIME: process.execPath,
        GOOSE_MODULE_LOADER: opts.own.loader,
        GOOSE_MODULE_NO_RESTART: refused.restart,
        GOOSE_MODULE_TOKEN_ENV: opts.config.goose.aiGateway.enabled ? opts.config.goose.aiGateway.tokenEnv : "",
        GOOSE_MODULE_AGENTAPI_PID_FILE: paths.pidFile,
        GOOSE_MODULE_AGENTAPI_LOG: paths.agentapiLog,
        GOOSE_MODULE_SUPERVISOR_LOG: supervisorLog(paths),
        GOOSE_MODULE_SUPERVISOR_PID: paths.supervisorPid,
        GOOSE_MODULE_GAVE_UP: gaveUpFile(paths),
        GOOSE_MODULE_LOG_MAX_BYTES: String(LOG_LIMITS.maxBytes),
        GOOSE_MODULE_LOG_GENERATIONS: String(LOG_LIMITS.generations),
        // Empty: no autosave.
        GOOSE_MODULE_SESSIONS_DB: autosave ? gooseSessionsDb(process.env, homeDir()) : "",
        GOOSE_MODULE_WATCH_NOTE: autosave
          ? "; the chat is saved after every turn"
          : `; no autosave (${opts.gate.enabled ? refused.autosave : opts.gate.reason})`,
      },
    });
    const claim = await claimSupervisorPid(paths, opts.stopsSeen, pid);
    if ("leave" in claim) {
      signal(pid, "SIGTERM");
      return log(`${claim.leave}; the new supervisor left`);
    }
    const restarts = refused.restart === "" ? "restarts it if it exits without a stop" : "will not restart it";
    log(`supervisor (PID ${pid}) watches AgentAPI and ${restarts}; log: ${supervisorLog(paths)}`);
  } catch (error) {
    if (await stopped()) return log("the workspace's stop script ran while the supervisor was starting; it left");
    warn(`the supervisor did not start, so nothing restarts AgentAPI if it exits: ${(error as Error).message}`);
  }
}

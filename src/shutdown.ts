import path from "node:path";
import { findAgentapiToStop, STEP_TIMEOUTS, settleTurn, stopAgentapi } from "./agent-stop.js";
import { homeDir, parseStopConfig, readSettingsDocument } from "./config.js";
import { mayTypeExit } from "./goose-mode.js";
import { readStopTarget } from "./launch-record.js";
import { log, phase, reportFatal } from "./log.js";
import { saveBeforeStop } from "./state-save.js";
import { verifyStateAfterStop } from "./state-verify.js";
import { recordStopRequest } from "./stop-request.js";
import { standDownSupervisor } from "./supervisor-process.js";
import { sendTaskSnapshot } from "./task-snapshot.js";

async function main(): Promise<number> {
  const config = parseStopConfig(readSettingsDocument(), homeDir());
  const t = { ...STEP_TIMEOUTS, ...config.bounds };
  const { paths } = config;
  const { target: launched, note } = await readStopTarget(paths.launchRecord, {
    port: config.port,
    pidFile: paths.pidFile,
    stateFile: paths.stateFile,
  });
  if (note) log(`launch record: ${note}; using the settings' port and files`);
  const { port, pidFile, stateFile } = launched;
  const agentLog = path.join(paths.logs, "agentapi.log");
  const started = Date.now();

  await recordStopRequest(paths.dir);
  await phase("supervisor", () => standDownSupervisor(paths));
  const target = await phase("find", () => findAgentapiToStop(pidFile, port));
  const save = (why: string, timeoutMs: number) => saveBeforeStop({ launched, target, agentLog, why, timeoutMs });
  await phase("save", () => save("before stopping", t.save_ms));
  const turn = await phase("turn", async () => (target === null ? null : settleTurn(port, t)));
  if (turn?.ranTurn) await phase("save", () => save("after the turn", t.save_ms / 2));
  await phase("snapshot", () => sendTaskSnapshot(config.task, target !== null, port, t.http_ms));
  await phase("stop", async () => {
    if (target !== null)
      await stopAgentapi(target, port, t, {
        pidFile,
        turnCancelled: turn?.cancelled ?? false,
        saveAgain: () => save("after a cancel", t.save_ms / 2),
        typeExit: mayTypeExit(config.goose_mode),
      });
  });
  const lost = await phase("verify", () =>
    verifyStateAfterStop({
      stateFile,
      backupFile: launched.stateBackup,
      persistence: launched.persistence,
      wasRunning: target !== null,
    }),
  );
  log(`stop finished in ${Date.now() - started} ms`);
  return lost ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => reportFatal(error),
);

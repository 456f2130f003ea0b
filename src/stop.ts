import { saveBeforeStop } from "./agentapi/state-save.js";
import { mayTypeExit } from "./goose/mode.js";
import { log, phase, reportFatal } from "./lib/log.js";
import { endAgentapi, settleTurn } from "./lifecycle/agentapi-end.js";
import { verifyChatAfterStop } from "./lifecycle/chat-file.js";
import { identities, readLaunchRecord, recordStopFindings, watchedFiles } from "./lifecycle/launch-record.js";
import { endLeftovers } from "./lifecycle/leftovers.js";
import { recordStop } from "./lifecycle/stop-request.js";
import { homeDir, parseStopConfig, type StopConfig, takeScriptInputs } from "./settings/config.js";
import { findAgentapiToStop, type StopBounds, stopBounds, stopBudgetMs, takeLock } from "./stop/stop-steps.js";
import { sendTaskSnapshot } from "./stop/task-snapshot.js";
import { standDownSupervisor } from "./supervisor/process.js";

async function main(): Promise<number> {
  const config = parseStopConfig(takeScriptInputs().settings, homeDir());
  const bounds = stopBounds(config.bounds);
  const { paths } = config;
  const started = Date.now();
  const held = await phase("lock", () => takeLock(paths.dir, stopBudgetMs(bounds), bounds.lock));
  try {
    return await stop(config, bounds, started, held !== null);
  } finally {
    await held?.release();
  }
}

async function stop(config: StopConfig, bounds: StopBounds, started: number, locked: boolean): Promise<number> {
  const { paths } = config;
  const { launched, note } = await readLaunchRecord(paths.launchRecord, {
    port: config.port,
    pidFile: paths.pidFile,
    stateFile: paths.stateFile,
  });
  if (note) log(`launch record: ${note}; using the settings' port and files`);
  const { port, pidFile, stateFile } = launched;
  const agentLog = paths.agentapiLog;

  await recordStop(paths.dir);
  await phase("supervisor", () => standDownSupervisor(paths, bounds.standDown));
  const agentapiPid = await phase("find", () => findAgentapiToStop(pidFile, port));
  const save = (why: string, timeoutMs: number) => saveBeforeStop({ launched, agentapiPid, agentLog, why, timeoutMs });
  await phase("save", () => save("before stopping", bounds.save));
  const turn = await phase("turn", async () => (agentapiPid === null ? null : settleTurn(port, bounds)));
  if (turn?.ranTurn) await phase("save", () => save("after the turn", bounds.saveAgain));
  await phase("snapshot", () => sendTaskSnapshot(config.task, agentapiPid !== null, port, bounds.snapshot));
  const onExit = await phase("stop", async () =>
    agentapiPid === null
      ? false
      : endAgentapi(agentapiPid, port, bounds, {
          pidFile,
          typeExit: mayTypeExit(config.gooseMode),
          atPrompt: turn?.atPrompt ?? false,
        }),
  );
  // Only once this stop ended the AgentAPI it found: one it could not name
  // (a start may be launching it) stays untouched, with all it runs, and the
  // next launch ends what the last Goose left.
  await phase("leftovers", async () => (agentapiPid === null ? undefined : endLeftovers(paths.dir)));
  const lost = await phase("verify", () =>
    verifyChatAfterStop({
      stateFile,
      backupFile: launched.stateBackup,
      persistence: launched.persistence,
      wasRunning: agentapiPid !== null,
    }),
  );
  // Goose idle at its prompt before the stop, gone on the typed /exit: what
  // its database and the chat hold now is what the next start can trust
  // without asking Goose, while they stay as they are (launch/warm-shortcut.ts).
  const { gooseDb } = launched;
  await phase("record", async () => {
    if (!locked || note !== null || gooseDb === null || !onExit || !turn?.atPrompt || turn.ranTurn || lost) return;
    const files = await identities(watchedFiles(gooseDb, stateFile));
    // Without the record the next start asks Goose, as it always could. It is
    // read again rather than reused from the top: the supervisor may have
    // added why it gave up (supervisor.sh) before it stood down.
    await recordStopFindings(paths.launchRecord, { at: new Date().toISOString(), files }).catch((error) =>
      log(`could not add what the stop saw to ${paths.launchRecord} (${(error as Error).message})`),
    );
  });
  log(`stop finished in ${Date.now() - started} ms`);
  return lost ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => reportFatal(error),
);

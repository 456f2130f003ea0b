import { saveBeforeStop } from "./agentapi/state-save.js";
import { mayTypeExit } from "./goose/mode.js";
import { log, phase, reportFatal } from "./lib/log.js";
import { endAgentapi, settleTurn } from "./lifecycle/agentapi-end.js";
import { verifyChatAfterStop } from "./lifecycle/chat-file.js";
import {
  identities,
  readLaunchRecord,
  stopFindingsFile,
  watchedFiles,
  writeStopFindings,
} from "./lifecycle/launch-record.js";
import { endLeftovers, launchedProcess } from "./lifecycle/leftovers.js";
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
  // The record says what the start really launched, which can differ from
  // the settings when the template changed in between. Without a usable one
  // the start never confirmed persistence: the stop saves nothing and
  // restores no backup.
  const read = await readLaunchRecord(paths.launchRecord);
  const record = "record" in read ? read.record : null;
  const note =
    "problem" in read ? read.problem : "the start script left no launch record, so persistence was never confirmed";
  if (record === null) log(`launch record: ${note}; using the settings' port and files`);
  const port = record?.port ?? config.port;
  const pidFile = record?.pid_file ?? paths.pidFile;
  const stateFile = record?.state_file ?? paths.stateFile;
  const launched = {
    persistence: record?.persistence ?? false,
    persistenceReason: record?.persistence_reason ?? note,
    stateFile,
  };
  const agentLog = paths.agentapiLog;

  await recordStop(paths.dir);
  await phase("supervisor", () => standDownSupervisor(paths, bounds.standDown));
  const agentapiPid = await phase("find", () => findAgentapiToStop(pidFile, port));
  const leader = agentapiPid === null ? null : await launchedProcess(agentapiPid);
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
  await phase("leftovers", async () => (agentapiPid === null ? undefined : endLeftovers(paths.dir, leader)));
  const lost = await phase("verify", () =>
    verifyChatAfterStop({
      stateFile,
      backupFile: record?.state_backup ?? null,
      persistence: launched.persistence,
      wasRunning: agentapiPid !== null,
    }),
  );
  // Goose idle at its prompt before the stop, gone on the typed /exit: what
  // its database and the chat hold now is what the next start can trust
  // without asking Goose, while they stay as they are (launch/warm-shortcut.ts).
  await phase("record", async () => {
    if (!locked || record === null || !onExit || !turn?.atPrompt || turn.ranTurn || lost) return;
    const files = await identities(watchedFiles(record.goose.db, stateFile));
    const file = stopFindingsFile(paths);
    // Without them the next start asks Goose, as it always could.
    await writeStopFindings(file, { launch: record.started_at, at: new Date().toISOString(), files }).catch((error) =>
      log(`could not write what the stop saw to ${file} (${(error as Error).message})`),
    );
  });
  log(`stop finished in ${Date.now() - started} ms`);
  return lost ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => reportFatal(error),
);

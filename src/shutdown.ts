import { rm } from "node:fs/promises";
import path from "node:path";
import { homeDir, readSettings, resolvePaths, type StopConfig } from "./config.js";
import { log, phase, reportFatal, warn } from "./log.js";
import { findRunningAgentapi, readPidFile } from "./process-info.js";
import { readLaunchRecord, type LaunchRecord } from "./launch-record.js";
import { agentapiUrl, getJson } from "./http.js";
import { buildSnapshot, type ChatMessage } from "./snapshot.js";
import { DEFAULT_TIMEOUTS, settleTurn, stopAgentapi } from "./agent-stop.js";
import { recordStopRequest } from "./stop-request.js";
import { saveState } from "./state-save.js";
import { verifyStateAfterStop } from "./state-verify.js";
import { diskFullNote } from "./disk-space.js";

async function postSnapshot(config: StopConfig, port: number, timeoutMs: number): Promise<string> {
  const base = process.env.CODER_AGENT_URL;
  const token = process.env.CODER_AGENT_TOKEN;
  if (!base || !token) return "skipped: CODER_AGENT_URL or CODER_AGENT_TOKEN is not set";
  const reply = await getJson<{ messages?: ChatMessage[] }>(agentapiUrl(port, "/messages"), timeoutMs);
  if (!reply.ok) return `skipped: AgentAPI /messages failed (${reply.error})`;
  const snapshot = buildSnapshot(reply.body.messages ?? []);
  const url = `${base.replace(/\/+$/, "")}/api/v2/workspaceagents/me/tasks/${encodeURIComponent(config.task.id)}/log-snapshot?format=agentapi`;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Coder-Session-Token": token, "Content-Type": "application/json" },
      body: snapshot.payload,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const summary = `${snapshot.kept} message(s), ${Buffer.byteLength(snapshot.payload)} bytes${snapshot.truncated ? ", last message truncated" : ""}`;
    if (response.status === 204) return `posted ${summary}`;
    if (response.status === 404) return "Coder answered 404: this deployment does not accept task log snapshots (an older Coder); skipped";
    const text = (await response.text().catch(() => "")).slice(0, 300);
    return `Coder answered HTTP ${response.status} to the snapshot (${summary}): ${text}`;
  } catch (error) {
    return `posting the snapshot failed: ${(error as Error).message}`;
  }
}

async function findTarget(pidFile: string, port: number): Promise<number | null> {
  const found = await findRunningAgentapi(pidFile, port);
  const messages: Record<typeof found.status, string> = {
    running: `AgentAPI is PID ${found.pid}`,
    "no-file": `no PID in ${pidFile}; nothing to signal`,
    dead: `PID ${found.pid} from ${pidFile} is not running; nothing to signal`,
    foreign: `PID ${found.pid} from ${pidFile} is not this AgentAPI (its command line differs); it is left alone`,
  };
  log(messages[found.status]);
  return found.status === "running" ? (found.pid as number) : null;
}

async function saveBeforeStop(opts: { record: LaunchRecord | null; target: number | null; stateFile: string; agentLog: string; why: string; timeoutMs: number }): Promise<void> {
  const { record, target } = opts;
  if (!record) return log("save skipped: the start script left no launch record, so persistence was never confirmed");
  if (!record.persistence) return log(`save skipped: state persistence is off (${record.persistence_reason})`);
  if (target === null) return log("save skipped: AgentAPI is not running");
  const outcome = await saveState(target, opts.stateFile, opts.agentLog, opts.timeoutMs);
  const full = outcome.confirmed ? null : await diskFullNote(opts.stateFile);
  (outcome.confirmed ? log : warn)(`save (${opts.why}): ${outcome.note}${full ? `; ${full}` : ""}`);
}

async function main(): Promise<number> {
  const config = readSettings<StopConfig>();
  const t = { ...DEFAULT_TIMEOUTS, ...config.timeouts };
  const paths = resolvePaths(homeDir(), config.module_folder, config.agentapi);
  const record = await readLaunchRecord(paths.launchRecord);
  const port = record?.port ?? config.agentapi.port;
  const pidFile = record?.pid_file ?? paths.pidFile;
  const stateFile = record?.state_file ?? paths.stateFile;
  const agentLog = path.join(paths.logs, "agentapi.log");
  const persistence = Boolean(record?.persistence);
  const started = Date.now();

  const requestProblem = await recordStopRequest(paths.dir);
  if (requestProblem) warn(`could not record the stop for a start still running (${requestProblem})`);

  const target = await phase("find", () => findTarget(pidFile, port));
  const save = (why: string, timeoutMs: number) => saveBeforeStop({ record, target, stateFile, agentLog, why, timeoutMs });
  await phase("save", () => save("before stopping", t.save_ms));
  const turn = await phase("turn", async () => {
    if (target === null) return null;
    const settled = await settleTurn(port, t);
    log(`turn: ${settled.note}`);
    return settled;
  });
  if (turn?.ranTurn) await phase("save", () => save("after the turn", t.save_ms / 2));

  await phase("snapshot", async () => {
    if (!config.task.enabled) return log("snapshot skipped: this workspace is not a Coder task");
    if (!config.task.log_snapshot) return log("snapshot skipped: task_log_snapshot is false");
    if (target === null) return log("snapshot skipped: AgentAPI is not running");
    log(`snapshot: ${await postSnapshot(config, port, t.http_ms)}`);
  });

  await phase("stop", async () => {
    if (target === null) return;
    await stopAgentapi(target, port, t, { turnCancelled: turn?.cancelled ?? false, saveAgain: () => save("after a cancel", t.save_ms / 2) });
    if ((await readPidFile(pidFile)) === target) await rm(pidFile, { force: true });
  });

  const lost = await phase("verify", () => verifyStateAfterStop({ stateFile, backupFile: record?.state_backup ?? null, persistence, wasRunning: target !== null }));
  log(`stop finished in ${Date.now() - started} ms`);
  return lost ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => reportFatal(error),
);

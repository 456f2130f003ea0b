import { copyFile, open, rm, stat } from "node:fs/promises";
import path from "node:path";
import { homeDir, readJsonConfig, resolvePaths, type StopConfig, type StopTimeouts } from "./config.js";
import { readOptional } from "./files.js";
import { log, phase, reportFatal, warn } from "./log.js";
import { findRunningAgentapi, readPidFile } from "./process-info.js";
import { readLaunchRecord } from "./launch-record.js";
import { agentapiUrl, getJson, pollUntil } from "./http.js";
import { buildSnapshot, type ChatMessage } from "./snapshot.js";
import { summarizeState, type StateSummary } from "./state-file.js";
import { killTree, signal, waitForExit } from "./stop-process.js";
import { judgeStateAfterStop } from "./state-check.js";

// Sized so the whole stop fits a 30 s grace period (Kubernetes' default):
// 3 s save + 2 x 3 s snapshot requests + 5 s turn (status checks included)
// + 12 s SIGTERM wait + up to 2 s for SIGKILL to land = 28 s at worst.
const DEFAULT_TIMEOUTS: StopTimeouts = { save_ms: 3000, turn_ms: 5000, term_ms: 12000, http_ms: 3000 };

interface FileMark {
  ino: number;
  mtimeMs: number;
  size: number;
}

async function mark(file: string): Promise<FileMark | null> {
  try {
    const s = await stat(file);
    return { ino: s.ino, mtimeMs: s.mtimeMs, size: s.size };
  } catch {
    return null;
  }
}

async function readFrom(file: string, offset: number): Promise<string> {
  const handle = await open(file, "r").catch(() => null);
  if (!handle) return "";
  try {
    const { size } = await handle.stat();
    if (size <= offset) return "";
    const buffer = Buffer.alloc(size - offset);
    await handle.read(buffer, 0, buffer.length, offset);
    return buffer.toString("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * SIGUSR1 has no acknowledgement. AgentAPI renames a fresh file over the state
 * file (new inode) and logs the outcome, including "Skipping state save" when
 * nothing changed, so either sign ends the wait.
 */
async function saveState(pid: number, stateFile: string, agentLog: string, timeoutMs: number): Promise<string> {
  const before = await mark(stateFile);
  const logOffset = (await mark(agentLog))?.size ?? 0;
  signal(pid, "SIGUSR1");
  const result = await pollUntil(
    async () => {
      const now = await mark(stateFile);
      if (now && (!before || now.ino !== before.ino || now.mtimeMs !== before.mtimeMs || now.size !== before.size)) return "state file rewritten";
      const said = await readFrom(agentLog, logOffset);
      if (said.includes("State saved successfully")) return "AgentAPI logged the save";
      if (said.includes("Skipping state save")) return "nothing changed since the last save";
      if (said.includes("Failed to save")) return "AgentAPI reported a failed save (see its log)";
      return undefined;
    },
    { timeoutMs, intervalMs: 25 },
  );
  return "value" in result ? result.value : `no confirmation within ${timeoutMs} ms; the shutdown save will follow SIGTERM`;
}

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

async function letTurnFinish(port: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  const check = async () => getJson<{ status: string }>(agentapiUrl(port, "/status"), Math.max(100, Math.min(1000, deadline - Date.now())));
  const status = await check();
  if (!status.ok) return `status unavailable (${status.error})`;
  if (status.body.status !== "running") return `agent ${status.body.status}`;
  const result = await pollUntil(
    async () => {
      const now = await check();
      return now.ok && now.body.status === "stable" ? true : undefined;
    },
    { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 100 },
  );
  // AgentAPI also says "running" while Goose is still starting, so this may
  // not be a turn at all.
  return "value" in result ? "agent became idle" : `agent still busy after ${timeoutMs} ms (a turn in progress, or Goose still starting); stopping anyway, an unfinished turn is lost`;
}

async function main(): Promise<number> {
  const config = await readJsonConfig<StopConfig>(process.argv[2]);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...config.timeouts };
  const paths = resolvePaths(homeDir(), config.module_folder, config.agentapi);
  const record = await readLaunchRecord(paths.launchRecord);
  const port = record?.port ?? config.agentapi.port;
  const pidFile = record?.pid_file ?? paths.pidFile;
  const stateFile = record?.state_file ?? paths.stateFile;
  const agentLog = path.join(paths.logs, "agentapi.log");
  const started = Date.now();

  const target = await phase("find", async () => {
    const found = await findRunningAgentapi(pidFile, port);
    const messages: Record<typeof found.status, string> = {
      running: `AgentAPI is PID ${found.pid}`,
      "no-file": `no PID in ${pidFile}; nothing to signal`,
      dead: `PID ${found.pid} from ${pidFile} is not running; nothing to signal`,
      foreign: `PID ${found.pid} from ${pidFile} is not this AgentAPI (its command line differs); it is left alone`,
    };
    log(messages[found.status]);
    return found.status === "running" ? (found.pid as number) : null;
  });

  await phase("save", async () => {
    if (!record) return log("save skipped: the start script left no launch record, so persistence was never confirmed");
    if (!record.persistence) return log(`save skipped: state persistence is off (${record.persistence_reason})`);
    if (target === null) return log("save skipped: AgentAPI is not running");
    log(`save: ${await saveState(target, stateFile, agentLog, timeouts.save_ms)}`);
  });

  await phase("snapshot", async () => {
    if (!config.task.enabled) return log("snapshot skipped: this workspace is not a Coder task");
    if (!config.task.log_snapshot) return log("snapshot skipped: task_log_snapshot is false");
    if (target === null) return log("snapshot skipped: AgentAPI is not running");
    log(`snapshot: ${await postSnapshot(config, port, timeouts.http_ms)}`);
  });

  await phase("turn", async () => {
    if (target === null) return;
    log(`turn: ${await letTurnFinish(port, timeouts.turn_ms)}`);
  });

  await phase("stop", async () => {
    if (target === null) return;
    signal(target, "SIGTERM");
    if (await waitForExit(target, timeouts.term_ms)) {
      log("AgentAPI exited after SIGTERM");
    } else {
      const children = await killTree(target);
      await waitForExit(target, 2000);
      warn(`AgentAPI did not exit within ${timeouts.term_ms} ms of SIGTERM; sent SIGKILL to it and to ${children.length} agent process group(s)`);
    }
    if ((await readPidFile(pidFile)) === target) await rm(pidFile, { force: true });
  });

  const lost = await phase("verify", async () => {
    const backupFile = record?.state_backup ?? null;
    const after = summarizeState(await readOptional(stateFile));
    const backup: StateSummary = backupFile ? summarizeState(await readOptional(backupFile)) : { kind: "missing" };
    const verdict = judgeStateAfterStop(after, backup, { persistence: Boolean(record?.persistence), wasRunning: target !== null });
    if (verdict.action === "restore" && backupFile) {
      await copyFile(backupFile, stateFile);
      warn(`${verdict.reason}; restored ${stateFile} from ${backupFile}`);
    } else if (verdict.lost) {
      warn(`state: ${verdict.reason}`);
    } else {
      log(`state: ${verdict.reason}`);
    }
    return verdict.lost;
  });

  log(`stop finished in ${Date.now() - started} ms`);
  return lost ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => reportFatal(error),
);

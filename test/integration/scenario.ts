// Shared steps for the integration tests that play a workspace's life, on
// top of the workspace simulator in support/workspace: a throwaway workspace
// per test (cleaned up after it, kept when it fails), the module rendered for
// it, and the checks most scenarios make.

import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, expect, onTestFinished } from "vitest";
import {
  agentStartArgs,
  commandLine,
  parentPid,
  type Rendered,
  type RunResult,
  renderModule,
  run,
  tools,
  Workspace,
  type WorkspaceOptions,
} from "../../support/workspace/index.js";

export const WORKSPACE_ID = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b";
export const TASK_ID = "0b7e5c1a-6d2f-4f3e-9a8b-7c6d5e4f3a2b";
export const PROMPT = "Fix the flaky login test and open a pull request.";

/** The module's `task` input for a task whose prompt is `prompt` (a template passes data.coder_task.me). */
export function task(prompt: string, id = TASK_ID): { task: { enabled: true; id: string; prompt: string } } {
  return { task: { enabled: true, id, prompt } };
}

/** The module's `task` input of a plain workspace: no task, no prompt. */
export const PLAIN = { task: null };
export const SESSION = "goose-task";

const workspaces: Workspace[] = [];

afterEach(async () => {
  for (const ws of workspaces.splice(0)) await ws.cleanup();
});

export async function newWorkspace(opts: WorkspaceOptions = {}): Promise<Workspace> {
  const ws = await Workspace.create(opts);
  workspaces.push(ws);
  // Runs after afterEach has ended the processes; a failed test keeps its HOME to look at.
  onTestFinished(async ({ task }) => {
    if (task.result?.state === "pass") await rm(ws.home, { recursive: true, force: true });
  });
  return ws;
}

/**
 * The module as a template author would use it, with the binaries taken from
 * PATH: by default a task with PROMPT (pass PLAIN for a plain workspace).
 */
export function render(
  ws: Workspace,
  vars: Record<string, unknown> = {},
  coderEnv: Record<string, string> = {},
): Promise<Rendered> {
  return renderModule(
    ws.goose.vars({
      agent_id: "test-agent",
      goose_provider: "anthropic",
      goose_model: "claude-sonnet-4-5",
      install_goose: false,
      install_agentapi: false,
      agentapi_port: ws.port,
      folder: path.join(ws.home, "project"),
      ...task(PROMPT),
      session_name: SESSION,
      ...vars,
    }),
    { CODER_WORKSPACE_ID: WORKSPACE_ID, ...coderEnv },
  );
}

export function output(result: RunResult): string {
  return `${result.stdout}${result.stderr}`;
}

export function expectOk(result: RunResult, what: string): void {
  expect(result.code, `${what} failed:\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`).toBe(0);
}

/** A process's argv; [] once it is gone. */
export function cmdline(pid: number): Promise<string[]> {
  return commandLine(pid);
}

/** Live `agentapi` processes started with this workspace's HOME. */
export async function agentapiPids(ws: Workspace): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await ws.processes()) {
    const argv = await cmdline(pid);
    if (argv.length > 0 && path.basename(argv[0] as string) === "agentapi") found.push(pid);
  }
  return found;
}

export async function start(ws: Workspace, rendered: Rendered, agentapiBinary?: string): Promise<RunResult> {
  const result = await ws.runStart(rendered, agentapiBinary);
  expectOk(result, "start script");
  return result;
}

/** Runs the stop script and waits until nothing of this workspace runs any more. */
export async function stop(ws: Workspace, rendered: Rendered, agentapiBinary?: string): Promise<RunResult> {
  const result = await ws.runScript(rendered.stop, agentapiBinary, 60_000);
  expectOk(result, "stop script");
  await ws.waitFor("no processes left after the stop", async () => (await ws.processes()).length === 0, 20_000);
  return result;
}

/** Waits until Goose has finished `count` turns in total and AgentAPI is stable. */
export async function waitTurns(ws: Workspace, count: number): Promise<void> {
  await ws.waitFor(`${count} completed Goose turn(s)`, async () => (await ws.replies()) >= count);
  await ws.waitStable();
}

export interface LaunchRecord {
  mode: "cold" | "warm";
  persistence: boolean;
  persistence_reason: string;
  interrupted_turn: { action: string; reason: string };
}

export async function launchRecord(ws: Workspace): Promise<LaunchRecord> {
  return JSON.parse((await ws.readModuleFile("agentapi-launch.json")) ?? "null") as LaunchRecord;
}

/** The reason in the supervisor's give-up file (after its line with the time); null when there is none. */
export async function gaveUpReason(ws: Workspace): Promise<string | null> {
  const text = await ws.readModuleFile("supervisor.gave-up");
  return text === null ? null : text.split("\n").slice(1).join("\n").replace(/\n$/, "");
}

export interface SavedState {
  messages: Array<{ id: number; message: string; role: string }>;
}

export async function savedState(ws: Workspace): Promise<SavedState | null> {
  const text = await ws.readModuleFile("agentapi-state.json");
  return text === null ? null : (JSON.parse(text) as SavedState);
}

/** Collapses the screen padding AgentAPI keeps in message content. */
export function flat(text: string): string {
  return text.split(/\s+/).filter(Boolean).join(" ");
}

/** Sends a chat message the way the dashboard does, without waiting for Goose's turn to end. */
export async function sendWithoutWaiting(ws: Workspace, content: string): Promise<void> {
  await ws.waitStable();
  await ws.agentapi.post(content);
}

/**
 * How long Goose's next turns take: the double reads GOOSE_DOUBLE_TURN_MS_FILE
 * when each turn starts; a real Goose waits that long for the model stub.
 */
export async function setTurnMs(ws: Workspace, ms: number): Promise<void> {
  const stub = ws.modelStub;
  if (stub) return stub.setDelay(ms);
  const file = path.join(ws.home, "goose-double-turn-ms");
  await writeFile(file, `${ms}\n`);
  ws.setEnv({ GOOSE_DOUBLE_TURN_MS_FILE: file });
}

/** A new workspace and the module rendered for it (see render). */
export async function setup(
  vars: Record<string, unknown> = {},
  coderEnv: Record<string, string> = {},
): Promise<{ ws: Workspace; rendered: Rendered }> {
  const ws = await newWorkspace();
  return { ws, rendered: await render(ws, vars, coderEnv) };
}

/** One start, `turns` finished turns, and the stop. */
export async function cycle(ws: Workspace, rendered: Rendered, turns = 1): Promise<void> {
  await start(ws, rendered);
  await waitTurns(ws, turns);
  await stop(ws, rendered);
}

export function expectFailed(result: RunResult): void {
  expect(result.code, output(result)).not.toBe(0);
}

export async function expectNoAgentapi(ws: Workspace): Promise<void> {
  expect(await agentapiPids(ws)).toEqual([]);
}

export function waitNoProcesses(ws: Workspace): Promise<unknown> {
  return ws.waitFor("no processes left", async () => (await ws.processes()).length === 0, 20_000);
}

export const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"];
/** The default AgentAPI's folder, for a PATH without the test's goose. */
export const agentapiDir = () => path.dirname(tools.agentapiNew);

/** Runs a script as the agent does but with `pathDirs` as PATH (say, one without agentapi or goose). */
export function runWithPath(ws: Workspace, rendered: Rendered, pathDirs: string[], env: NodeJS.ProcessEnv = {}) {
  return run("/bin/sh", agentStartArgs(rendered), {
    cwd: ws.home,
    env: { ...ws.env(), PATH: pathDirs.join(":"), ...env },
  });
}

/** A process's environment; empty once it is gone. */
export async function environOf(pid: number): Promise<Map<string, string>> {
  const text = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
  return new Map(
    text
      .split("\0")
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );
}

/** The workspace's one AgentAPI. */
export async function theAgentapi(ws: Workspace): Promise<number> {
  const pids = await agentapiPids(ws);
  expect(pids).toHaveLength(1);
  return pids[0] as number;
}

/** A new AgentAPI, not `old`, answering and settled (the supervisor's restart). */
export async function waitRestarted(ws: Workspace, old: number): Promise<number> {
  const pid = await ws.waitFor("the supervisor's restart of AgentAPI", async () => {
    const [now] = await agentapiPids(ws);
    return now !== undefined && now !== old && (await ws.status()) !== null ? now : undefined;
  });
  await ws.waitStable();
  return pid;
}

/** The version an AgentAPI binary reports (`agentapi version X`). */
export async function agentapiVersion(binary: string): Promise<string> {
  const result = await run(binary, ["--version"]);
  const version = /^agentapi version (\S+)$/m.exec(result.stdout)?.[1];
  if (!version) throw new Error(`${binary} --version printed ${JSON.stringify(output(result))}`);
  return version;
}

/** Writes `body` (shell) as an executable `goose` in $HOME/`dir`, and returns that folder for a PATH. */
export async function fakeGoose(ws: Workspace, dir: string, body: string): Promise<string> {
  const folder = path.join(ws.home, dir);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, "goose"), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return folder;
}

/**
 * Live supervisors of this workspace's module folder, read from /proc: the
 * processes whose command line, as `ps` shows it, ends with
 * `goose-module-supervisor <module folder>`. A child the sh has forked keeps
 * that command line until it execs (`sleep`, a pipeline), so a process whose
 * parent is a supervisor is that supervisor's, not a second one.
 */
export async function supervisors(ws: Workspace): Promise<number[]> {
  const found = new Map<number, number | null>();
  for (const pid of await ws.processes()) {
    const argv = await cmdline(pid);
    if (argv.slice(-2).join("\0") === `goose-module-supervisor\0${ws.moduleDir}`) found.set(pid, await parentPid(pid));
  }
  return [...found.keys()].filter((pid) => !found.has(found.get(pid) as number));
}

/**
 * The workspace's long-lived processes: all but what a supervisor runs for a
 * moment (its `sleep` every quarter second, an autosave helper, the commands
 * of its subshells), which come and go whatever the test does. A process gone
 * before its parent is read was one of those.
 */
export async function steadyProcesses(ws: Workspace): Promise<number[]> {
  const watchers = new Set(await supervisors(ws));
  const steady: number[] = [];
  for (const pid of await ws.processes()) {
    let parent = await parentPid(pid);
    for (let depth = 0; parent !== null && parent > 1 && !watchers.has(parent) && depth < 8; depth++)
      parent = await parentPid(parent);
    if (parent !== null && !watchers.has(parent)) steady.push(pid);
  }
  return steady.sort();
}

/** A new workspace (`env` set first), the module rendered with `vars` (see render), and its start. */
export async function startNew(vars: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const ws = await newWorkspace();
  ws.setEnv(env);
  const rendered = await render(ws, vars);
  return { ws, rendered, started: await start(ws, rendered) };
}

export const supervisorLog = (ws: Workspace) =>
  readFile(path.join(ws.moduleDir, "logs", "supervisor.log"), "utf8").catch(() => "");

/**
 * The supervisor's reason for giving up at its first restart, after the
 * caller changed a file the start verified and then ended AgentAPI or Goose:
 * nothing was relaunched, the supervisor has exited, and no AgentAPI runs.
 */
export async function gaveUpWithoutRelaunch(ws: Workspace): Promise<string> {
  const log = await ws.waitFor("the supervisor's restart or give-up", async () => {
    const text = await supervisorLog(ws);
    return /gave up:|restarted:/.test(text) ? text : undefined;
  });
  expect(log).not.toMatch(/restarted:/);
  await ws.waitFor("the supervisor's exit", async () => (await supervisors(ws)).length === 0);
  expect(await agentapiPids(ws)).toEqual([]);
  return /gave up: (.*)/.exec(log)?.[1] ?? "";
}

/** The supervisor's log once it has given up (five restarts back off for 31 s in all first). */
export function waitGiveUp(ws: Workspace): Promise<string> {
  const gaveUp = async () => {
    const log = await supervisorLog(ws);
    return log.includes("gave up:") ? log : undefined;
  };
  return ws.waitFor("the supervisor's give-up", gaveUp, 120_000);
}

// What the stop script's tests share (stop.test.ts, stop-snapshot.test.ts):
// the module rendered as a task template renders it, start and stop runs,
// the stop's documented bounds and the readings of its outcome.

import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, expect } from "vitest";
import {
  agentSignals,
  type ChatMessage,
  CODER_TASK,
  CoderEndpoint,
  type EndpointAnswer,
  type Rendered,
  type RunResult,
  renderModule,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import { newWorkspace } from "./scenario.js";

const base = {
  agent_id: "agent-1",
  goose_provider: "anthropic",
  goose_model: "claude-sonnet-4-5",
  install_goose: false,
  install_agentapi: false,
};

// The stop script's documented bounds (README, "Stop grace period"; turn and
// SIGTERM waits come from stop_turn_wait_seconds / stop_sigterm_wait_seconds),
// which the stop names in its log lines.
export const SAVE_MS = 2000;
export const TURN_MS = 5000;
export const TERM_MS = 10000;
export const HTTP_MS = 2000;
export const EXIT_MS = 2000;
/** What the stop prints when Goose left by itself on `/exit`. */
export const GRACEFUL = "Goose exited on /exit, and AgentAPI with it";

export type Message = ChatMessage;

let coder: CoderEndpoint | null = null;

// newWorkspace (scenario.ts) ends each workspace's processes after its test.
afterEach(async () => {
  await coder?.close();
  coder = null;
});

/** The stand-in for the Coder deployment, answering `answer`; closed after the test. */
export async function coderEndpoint(answer: EndpointAnswer): Promise<CoderEndpoint> {
  coder = await CoderEndpoint.start(answer);
  return coder;
}

export interface Setup {
  ws: Workspace;
  rendered: Rendered;
  taskId: string | null;
}

/** A task (`prompt` set, or "" for none) renders as a task template does: task = data.coder_task.me. */
export async function setup(opts: { vars?: Record<string, unknown>; prompt?: string } = {}): Promise<Setup> {
  const ws = await newWorkspace();
  const taskId = opts.prompt === undefined ? null : randomUUID();
  const coderEnv: Record<string, string> = { CODER_WORKSPACE_ID: randomUUID() };
  if (taskId) Object.assign(coderEnv, { CODER_TASK_ID: taskId, CODER_TASK_PROMPT: opts.prompt ?? "" });
  const rendered = await renderModule(
    ws.goose.vars({
      ...base,
      ...(taskId ? { task: CODER_TASK } : {}),
      folder: path.join(ws.home, "project"),
      agentapi_port: ws.port,
      enable_state_persistence: true,
      ...opts.vars,
    }),
    coderEnv,
  );
  return { ws, rendered, taskId };
}

export async function start(w: Workspace, rendered: Rendered, binary = tools.agentapiNew): Promise<RunResult> {
  const result = await w.runStart(rendered, binary);
  expect(result.code, `start failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

export async function stop(w: Workspace, rendered: Rendered, binary = tools.agentapiNew): Promise<RunResult> {
  const result = await w.runScript(rendered.stop, binary, 60_000);
  // Shown on failure and kept in the run log: the phase lines are the stop's own account.
  console.log(`stop: exit ${result.code} in ${result.ms} ms\n${result.stdout}${result.stderr}`);
  return result;
}

/** `phase <name>: <ms> ms` lines, in order. */
export function phases(output: string): Array<{ name: string; ms: number }> {
  return [...output.matchAll(/^goose-module: phase (\w+): (\d+) ms$/gm)].map((m) => ({
    name: m[1] as string,
    ms: Number(m[2]),
  }));
}

/** AgentAPI's log for its most recent launch (the start script appends a `---` header per launch). */
export async function agentapiLog(w: Workspace): Promise<string> {
  const text = await readFile(path.join(w.moduleDir, "logs", "agentapi.log"), "utf8");
  return text.slice(text.lastIndexOf("\n--- "));
}

export async function pidOf(w: Workspace): Promise<number> {
  const text = await w.readModuleFile("agentapi.pid");
  const pid = Number(text?.trim());
  expect(pid, "agentapi.pid").toBeGreaterThan(1);
  return pid;
}

/** The state file's messages in /messages' shape (the file says `message`, the API `content`). */
export async function stateMessages(w: Workspace): Promise<Message[]> {
  const text = await w.readModuleFile("agentapi-state.json");
  expect(text, "agentapi-state.json").not.toBeNull();
  const state = JSON.parse(text as string) as {
    version: number;
    messages: Array<{ id: number; role: string; message: string }>;
  };
  expect(state.version).toBe(1);
  return state.messages.map((m) => ({ id: m.id, role: m.role, content: m.message }));
}

export const shape = (messages: Message[]) => messages.map(({ id, role, content }) => ({ id, role, content }));

/**
 * The graceful end of a stop: Goose, idle at its prompt, exited on the typed
 * `/exit`, and AgentAPI with it; no SIGTERM and no SIGKILL were needed, and
 * AgentAPI's log shows no shutdown signal.
 */
export async function expectGracefulStop(w: Workspace, result: RunResult): Promise<void> {
  expect(result.stdout).toContain(GRACEFUL);
  expect(result.stdout).not.toContain(`did not exit within ${EXIT_MS} ms of /exit`);
  expect(agentSignals(result.stdout)).toEqual([]);
  expect(await agentapiLog(w)).not.toContain("Received shutdown signal");
  if (!w.goose.real) {
    // The double's own account: the interactive Goose left on `/exit` with code 0, not by a signal.
    const events = await w.events();
    const interactive = events.filter(
      (e) =>
        e.event === "start" &&
        (e.argv?.[1] === "run" || e.argv?.[1] === "session") &&
        !["list", "export"].includes(e.argv?.[2]),
    );
    const pid = interactive[interactive.length - 1]?.pid;
    expect(pid, "an interactive Goose in the double's event log").toBeDefined();
    expect(events.filter((e) => e.event === "exit" && e.pid === pid)).toEqual([
      expect.objectContaining({ code: 0, reason: "/exit" }),
    ]);
  }
}

/** A task workspace whose stop script talks to a Coder endpoint answering `answer`. */
export async function taskSetup(answer: EndpointAnswer, prompt = "") {
  const s = await setup({ prompt });
  const coder = await coderEndpoint(answer);
  const { token } = coder;
  s.ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: token });
  return { ...s, token, coder };
}

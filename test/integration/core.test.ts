// The core scenarios, which every cell of the compatibility matrix runs
// (tools/test.sh): one task workspace's life, from a cold start with the task
// prompt to an idle stop after a warm start. The cell picks the combination
// through the environment: the scripts' runtime (WORKSPACE_RUNTIME), AgentAPI
// (WORKSPACE_AGENTAPI), the coder provider (CODER_PROVIDER_VERSION) and the
// Terraform CLI (TF); unset, they are the primary combination's.
//
// The steps share one workspace, in order: each starts where the previous one
// left it.

import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChatMessage,
  CoderEndpoint,
  type Rendered,
  run,
  tools,
  Workspace,
} from "../../support/workspace/index.js";
import { expectOk, launchRecord, output, PROMPT, render, SESSION, waitTurns } from "./scenario.js";

/** The release that brought --state-file and SIGUSR1 (README, "Requirements"). */
const PERSISTENCE_SINCE = "0.12.0";
const FOLLOW_UP = "Also update the changelog.";

async function agentapiVersion(binary: string): Promise<string> {
  const result = await run(binary, ["--version"]);
  const version = /^agentapi version (\S+)$/m.exec(result.stdout)?.[1];
  if (!version) throw new Error(`${binary} --version printed ${JSON.stringify(output(result))}`);
  return version;
}

const shape = (messages: ChatMessage[]) => messages.map(({ id, role, content }) => ({ id, role, content }));

const agentapi = tools.agentapiUnderTest;
const combination = [
  `runtime ${process.env.WORKSPACE_RUNTIME || "the machine's node"}`,
  `AgentAPI ${agentapi}`,
  `coder provider ${process.env.CODER_PROVIDER_VERSION}`,
  `${process.env.TF}`,
].join(", ");

describe(`core scenarios (${combination})`, () => {
  let ws: Workspace;
  let rendered: Rendered;
  let coder: CoderEndpoint;
  let persistence: boolean;
  let version: string;
  const taskId = randomUUID();
  let sessionId: string;
  let beforeStop: ChatMessage[];
  let passed = 0;

  beforeAll(async () => {
    version = await agentapiVersion(agentapi);
    persistence = semver.gte(version, PERSISTENCE_SINCE);
    ws = await Workspace.create({ agentapi });
    coder = await CoderEndpoint.start(204);
    ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: coder.token });
    rendered = await render(ws, {}, { CODER_TASK_ID: taskId, CODER_TASK_PROMPT: PROMPT });
  });

  afterAll(async () => {
    await ws?.cleanup();
    await coder?.close();
    // A failed step keeps the HOME to look at.
    if (ws && passed === 5) await rm(ws.home, { recursive: true, force: true });
  });

  it("cold start with the task prompt: a new named session gets it once, run by the runtime asked for", async () => {
    const started = await ws.runScript(rendered.start);
    expectOk(started, "start script");
    expect(started.stdout).toContain(`running the start script with ${ws.runtime.binary}\n`);
    expect(started.stdout).toContain("cold start");
    expect((await launchRecord(ws)).mode).toBe("cold");
    const warnings = output(started)
      .split("\n")
      .filter((line) => /warn/i.test(line) && line.includes(version));
    // Below the gate the start says once that the chat will not survive a restart.
    expect(warnings).toHaveLength(persistence ? 0 : 1);
    await waitTurns(ws, 1);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    const sessions = await ws.sessionsNamed(SESSION);
    expect(sessions).toHaveLength(1);
    sessionId = sessions[0] as string;
    passed++;
  });

  it("converse: a message sent through AgentAPI is answered in the same session", async () => {
    await ws.send(FOLLOW_UP);
    expect(await ws.replies()).toBe(2);
    expect(await ws.deliveries(FOLLOW_UP)).toBe(1);
    expect(await ws.sessionsNamed(SESSION)).toEqual([sessionId]);
    const messages = await ws.messages();
    expect(messages.filter((m) => m.role === "user").map((m) => m.content.trim())).toContain(FOLLOW_UP);
    passed++;
  });

  it("stop: the chat is saved and posted as the task log snapshot, then Goose leaves on /exit", async () => {
    beforeStop = await ws.messages();
    const stopped = await ws.runScript(rendered.stop, undefined, 60_000);
    expectOk(stopped, "stop script");
    expect(stopped.stdout).toContain(`running the stop script with ${ws.runtime.binary}\n`);
    if (persistence) {
      expect(stopped.stdout).toMatch(/save \(before stopping\): (AgentAPI logged the save|state file rewritten)/);
      const state = JSON.parse((await ws.readModuleFile("agentapi-state.json")) ?? "null") as {
        messages: Array<{ id: number; role: string; message: string }>;
      } | null;
      expect(state?.messages.map((m) => ({ id: m.id, role: m.role, content: m.message }))).toEqual(shape(beforeStop));
    } else {
      expect(stopped.stdout).toContain(`save skipped: state persistence is off (agentapi ${version} < 0.12.0)`);
      expect(await ws.readModuleFile("agentapi-state.json")).toBeNull();
    }
    expect(coder.requests).toHaveLength(1);
    const [request] = coder.requests;
    expect(request?.path).toBe(`/api/v2/workspaceagents/me/tasks/${taskId}/log-snapshot`);
    expect(request?.headers["coder-session-token"]).toBe(coder.token);
    expect(JSON.parse(request?.body.toString("utf8") ?? "{}").messages).toEqual(beforeStop);
    expect(stopped.stdout).toContain("Goose exited on /exit");
    expect(output(stopped)).not.toMatch(/SIGTERM|SIGKILL/);
    await ws.waitFor("no processes left after the stop", async () => (await ws.processes()).length === 0, 20_000);
    passed++;
  });

  it("warm start: the same session resumes without the prompt, with the chat restored", async () => {
    const started = await ws.runScript(rendered.start);
    expectOk(started, "warm start");
    expect(started.stdout).toContain(`running the start script with ${ws.runtime.binary}\n`);
    expect((await launchRecord(ws)).mode).toBe("warm");
    if (persistence) {
      // AgentAPI loads the saved chat once Goose shows its prompt.
      const restored = await ws.waitFor("the restored chat", async () => {
        const now = await ws.messages().catch(() => []);
        return now.length >= beforeStop.length ? now : null;
      });
      expect(shape(restored)).toEqual(shape(beforeStop));
    } else {
      // Goose remembers; the dashboard chat starts empty (README, "Requirements").
      await ws.waitStable();
      expect((await ws.messages()).filter((m) => m.role === "user")).toEqual([]);
    }
    await ws.waitStable();
    expect(await ws.sessionsNamed(SESSION)).toEqual([sessionId]);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect(await ws.replies()).toBe(2);
    passed++;
  });

  it("idle stop: Goose exits by itself on /exit, nothing is killed, nothing is left running", async () => {
    const stopped = await ws.runScript(rendered.stop, undefined, 60_000);
    expectOk(stopped, "stop script");
    expect(stopped.stdout).toContain("turn: agent idle at its prompt");
    expect(stopped.stdout).toContain("Goose exited on /exit");
    expect(output(stopped)).not.toMatch(/SIGTERM|SIGKILL/);
    await ws.waitFor("no processes left after the stop", async () => (await ws.processes()).length === 0, 20_000);
    expect(coder.requests).toHaveLength(2);
    passed++;
  });
});

// The core scenarios, which every cell of the compatibility matrix runs
// (tools/test.sh): a plain workspace's life and a task's, from a cold start
// (the plain workspace's first message typed into the chat, the task's prompt)
// to an idle stop after a warm start. The cell picks the scripts' runtime
// (WORKSPACE_RUNTIME), AgentAPI (WORKSPACE_AGENTAPI), the coder provider
// (CODER_PROVIDER_VERSION) and Terraform (TF); unset, the primary combination's.
// The steps share one workspace, in order: each starts where the previous one left it.

import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentSignals,
  type ChatMessage,
  CODER_TASK,
  CoderEndpoint,
  gooseMessages,
  type Rendered,
  type RunResult,
  run,
  tools,
  Workspace,
} from "../../support/workspace/index.js";
import {
  agentapiVersion,
  expectOk,
  launchRecord,
  output,
  PLAIN,
  PROMPT,
  render,
  SESSION,
  savedState,
  waitNoProcesses,
  waitTurns,
} from "./scenario.js";

/** The release that brought --state-file and SIGUSR1 (README, "Requirements"). */
const PERSISTENCE_SINCE = "0.12.0";
const FOLLOW_UP = "Also update the changelog.";
const FIRST_MESSAGE = "Read the README and list the open questions.";
const AFTER_RESTART = "Which files did you change before the restart?";
// The supervisor's autosave may have saved the last turn already.
const SAVED =
  /save \(before stopping\): (AgentAPI logged the save|state file rewritten|nothing changed since the last save)/;

/** Goose's terminal wraps long lines anywhere, so texts are compared without spaces and breaks. */
const squeeze = (text = "") => text.replace(/\s+/g, "");
const shape = (messages: ChatMessage[]) => messages.map(({ id, role, content }) => ({ id, role, content }));

const agentapi = tools.agentapiUnderTest;
const { WORKSPACE_RUNTIME, CODER_PROVIDER_VERSION, TF } = process.env;
const combination = `runtime ${WORKSPACE_RUNTIME || "the machine's node"}, AgentAPI ${agentapi}, coder provider ${CODER_PROVIDER_VERSION}, ${TF}`;

for (const isTask of [false, true]) {
  /** What starts the conversation: the task's prompt, or the first message typed into the plain workspace's chat. */
  const opening = isTask ? PROMPT : FIRST_MESSAGE;

  // Each step builds on the one before, so a failed step is not run again (a retry would find the next state).
  describe(`core scenarios, ${isTask ? "task" : "plain workspace"} (${combination})`, { retry: 0 }, () => {
    let ws: Workspace;
    let rendered: Rendered;
    let coder: CoderEndpoint;
    let persistence: boolean;
    let version: string;
    const taskId = randomUUID();
    let sessionId: string;
    let beforeStop: ChatMessage[];
    let passed = 0;

    /** Runs the start or stop script, which must succeed and say which runtime runs it. */
    async function script(which: "start" | "stop") {
      const result = await (which === "start" ? ws.runStart(rendered) : ws.runScript(rendered.stop, undefined, 60_000));
      expectOk(result, `${which} script`);
      expect(result.stdout).toContain(`running the ${which} script with ${ws.runtime.binary}\n`);
      return result;
    }

    /** Goose left on /exit; nothing was killed, nothing is left. */
    async function expectGraceful(stopped: RunResult) {
      expect(stopped.stdout).toContain("Goose exited on /exit");
      expect(agentSignals(output(stopped))).toEqual([]);
      await waitNoProcesses(ws);
    }

    beforeAll(async () => {
      version = await agentapiVersion(agentapi);
      persistence = semver.gte(version, PERSISTENCE_SINCE);
      ws = await Workspace.create({ agentapi });
      coder = await CoderEndpoint.start(204);
      ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: coder.token });
      // A task renders as examples/task-template does, task = data.coder_task.me.
      rendered = isTask
        ? await render(ws, { task: CODER_TASK }, { CODER_TASK_ID: taskId, CODER_TASK_PROMPT: PROMPT })
        : await render(ws, PLAIN);
    });

    afterAll(async () => {
      await ws?.cleanup();
      await coder?.close();
      // A failed step keeps the HOME to look at.
      if (ws && passed === 6) await rm(ws.home, { recursive: true, force: true });
    });

    it(`cold start${isTask ? " with the task prompt: a new named session gets it once" : ": a new named session, and the first message typed into the chat"}, run by the runtime asked for`, async () => {
      const started = await script("start");
      expect(started.stdout).toContain("cold start");
      // Goose comes from PATH here (install_goose = false): the start still names its version.
      const reported = (await run(ws.goose.bin, ["--version"], { env: ws.env() })).stdout.trim();
      expect(started.stdout).toContain(`goose-module: goose ${reported}: `);
      expect((await launchRecord(ws)).mode).toBe("cold");
      const warnings = output(started)
        .split("\n")
        .filter((line) => /warn/i.test(line) && line.includes(version));
      // Below the gate the start says once that the chat will not survive a restart.
      expect(warnings).toHaveLength(persistence ? 0 : 1);
      if (isTask) await waitTurns(ws, 1);
      else {
        // Nothing is sent by itself: Goose waits for the first message.
        await ws.waitStable();
        expect(await ws.replies()).toBe(0);
        await ws.send(FIRST_MESSAGE);
      }
      expect(await ws.deliveries(opening)).toBe(1);
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
      const users = (await ws.messages()).filter((m) => m.role === "user");
      expect(users.map((m) => m.content.trim())).toContain(FOLLOW_UP);
      passed++;
    });

    it(`stop: the chat is saved${isTask ? " and posted as the task log snapshot" : ", nothing is posted"}, then Goose leaves on /exit`, async () => {
      beforeStop = await ws.messages();
      const stopped = await script("stop");
      if (persistence) {
        expect(stopped.stdout).toMatch(SAVED);
        const state = await savedState(ws);
        expect(state?.messages.map((m) => ({ id: m.id, role: m.role, content: m.message }))).toEqual(shape(beforeStop));
      } else {
        expect(stopped.stdout).toContain(`save skipped: state persistence is off (agentapi ${version} < 0.12.0)`);
        expect(await ws.readModuleFile("agentapi-state.json")).toBeNull();
      }
      if (isTask) {
        expect(coder.requests).toHaveLength(1);
        const [request] = coder.requests;
        expect(request?.path).toBe(`/api/v2/workspaceagents/me/tasks/${taskId}/log-snapshot`);
        expect(request?.headers["coder-session-token"]).toBe(coder.token);
        expect(JSON.parse(request?.body.toString("utf8") ?? "{}").messages).toEqual(beforeStop);
      } else {
        expect(coder.requests).toEqual([]);
        expect(stopped.stdout.split("\n").filter((line) => line.includes("snapshot"))).toEqual([
          expect.stringContaining("snapshot skipped: this workspace is not a Coder task"),
          expect.stringMatching(/phase snapshot:/),
        ]);
      }
      await expectGraceful(stopped);
      passed++;
    });

    it(`warm start: the same session resumes without sending ${isTask ? "the prompt" : "anything"}, with the chat restored`, async () => {
      await script("start");
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
      expect(await ws.deliveries(opening)).toBe(1);
      expect(await ws.replies()).toBe(2);
      passed++;
    });

    it("after the restore, a new message adds only its own turn: Goose's reprinted history stays out of the chat", async () => {
      const restored = await ws.messages();
      const earlier = (await gooseMessages(ws.gooseDb, "assistant")).map((m) => m.text);
      expect(earlier).toHaveLength(2);
      if (!persistence) {
        // Nothing to restore: the chat's one message is Goose's screen, which shows the earlier turns.
        expect(restored.map((m) => m.role)).toEqual(["agent"]);
        expect(squeeze(restored[0]?.content)).toContain(squeeze("messages restored"));
        expect(squeeze(restored[0]?.content)).toContain(squeeze(FOLLOW_UP));
      }
      await ws.send(AFTER_RESTART);
      const now = await ws.messages();
      expect(shape(now.slice(0, restored.length))).toEqual(shape(restored));
      expect(now.slice(restored.length).map((m) => m.role)).toEqual(["user", "agent"]);
      expect(now[restored.length]?.content.trim()).toBe(AFTER_RESTART);
      const answer = squeeze(now.at(-1)?.content);
      expect(answer).toContain(squeeze((await gooseMessages(ws.gooseDb, "assistant")).at(-1)?.text));
      for (const text of [...earlier, FOLLOW_UP, "messages restored"]) expect(answer).not.toContain(squeeze(text));
      passed++;
    });

    it("idle stop: Goose exits by itself on /exit, nothing is killed, nothing is left running", async () => {
      const stopped = await script("stop");
      expect(stopped.stdout).toContain("turn: agent idle at its prompt");
      await expectGraceful(stopped);
      expect(coder.requests).toHaveLength(isTask ? 2 : 0);
      passed++;
    });
  });
}

// The stop script's task log snapshot (see stop.test.ts): what it POSTs to the
// stand-in for the Coder deployment, and how it treats that endpoint's answers.

import { describe, expect, it } from "vitest";
import { DOUBLE_ONLY } from "../../support/vitest/skips.js";
import {
  CoderEndpoint,
  type EndpointAnswer,
  gooseUnderTest,
  type RecordedRequest,
  type RunResult,
  type Workspace,
} from "../../support/workspace/index.js";
import {
  coderEndpoint,
  expectGracefulStop,
  GRACEFUL,
  HTTP_MS,
  type Message,
  phases,
  setup,
  shape,
  start,
  stateMessages,
  stop,
  taskSetup,
} from "./stop-scenario.js";

const SNAPSHOT_LIMIT = 64 * 1024;
const TRUNCATION_MARKER = "[...content truncated, showing the end of the message...]\n\n";

/** The stop's own lines about the snapshot, beside its phase timing. */
const snapshotLines = (result: RunResult) =>
  `${result.stdout}${result.stderr}`.split("\n").filter((l) => l.includes("snapshot") && !/phase snapshot:/.test(l));

/**
 * A task (with `prompt`; "" for none) whose stop talks to an endpoint answering
 * `answer`: started with `env`, `sends` sent, then stopped (exit 0). The first
 * request is checked as the snapshot POST with the agent's token, unless it
 * was never answered.
 */
async function stopTask(
  answer: EndpointAnswer,
  { prompt = "Fix the flaky test in ci.yml.", env = {}, sends = ["Run the test suite."] } = {},
) {
  const s = await taskSetup(answer, prompt);
  s.ws.setEnv(env);
  await start(s.ws, s.rendered);
  for (const text of sends) await s.ws.send(text);
  const before = await s.ws.messages();
  const result = await stop(s.ws, s.rendered);
  expect(result.code).toBe(0);
  const r = s.coder.requests[0] as RecordedRequest;
  expect(r).toBeDefined();
  if (answer !== "never") {
    expect(r.method).toBe("POST");
    expect(r.path).toBe(`/api/v2/workspaceagents/me/tasks/${s.taskId}/log-snapshot`);
    expect(r.query.get("format")).toBe("agentapi");
    expect(r.headers["coder-session-token"]).toBe(s.token);
    expect(r.headers["content-type"]).toMatch(/^application\/json/);
  }
  const posted = () => (JSON.parse(r.body.toString("utf8")) as { messages: Message[] }).messages;
  return { ...s, before, result, posted, raw: r.body };
}

/** Goose left gracefully, the state file holds the whole chat, and nothing is left running. */
async function expectKept(ws: Workspace, result: RunResult, before: Message[]): Promise<void> {
  await expectGracefulStop(ws, result);
  expect(await stateMessages(ws)).toEqual(shape(before));
  expect(await ws.processes()).toEqual([]);
}

describe("stop: task log snapshot", () => {
  it("normal conversation: POSTs the messages with the agent token", async () => {
    const { ws, before, result, posted, coder } = await stopTask(204);
    expect(coder.requests).toHaveLength(1);
    expect(posted()).toEqual(before);
    expect(result.stdout).toContain(`snapshot: posted ${before.length} message(s)`);
    // The snapshot is taken while Goose still runs, and the stop then ends it gracefully.
    expect(result.stdout.indexOf("snapshot: posted")).toBeLessThan(result.stdout.indexOf(GRACEFUL));
    await expectKept(ws, result, before);
  });

  it("more than 10 messages: only the last 10 are posted, the state file keeps all", async () => {
    const sends = [1, 2, 3, 4, 5, 6].map((i) => `Step ${i}: keep going.`);
    const { ws, before, posted } = await stopTask(204, { sends });
    expect(before.length).toBeGreaterThan(10);
    expect(posted()).toEqual(before.slice(-10));
    expect(posted()[0]?.id).toBe(before.length - 10);
    expect(await stateMessages(ws)).toEqual(shape(before));
  });

  // Double-only: the double's GOOSE_DOUBLE_REPLY_LINES makes the huge reply; a
  // real Goose answers with the model stub's short replies.
  it("one huge message: the payload fits 64 KiB and ends with the message's tail", async ({ skip }) => {
    skip(gooseUnderTest().real, DOUBLE_ONLY);
    // No prompt: one turn, whose reply is about 72 KB of screen text.
    const env = { GOOSE_DOUBLE_REPLY_LINES: "900" };
    const { before, result, posted, raw } = await stopTask(204, {
      prompt: "",
      env,
      sends: ["Print the whole build log."],
    });
    const last = before.at(-1) as Message;
    expect(last.role).toBe("agent");
    expect(last.content).toContain("detail line 00900/00900");
    expect(Buffer.byteLength(JSON.stringify({ messages: [last] }))).toBeGreaterThan(SNAPSHOT_LIMIT);
    expect(raw.length).toBeLessThanOrEqual(SNAPSHOT_LIMIT);
    expect(raw.length).toBeGreaterThan(SNAPSHOT_LIMIT - 1024); // fitted, not gutted
    expect(posted()).toHaveLength(1);
    const { id, role, time, content } = posted()[0] as Message;
    expect({ id, role, time }).toEqual({ id: last.id, role: last.role, time: last.time });
    expect(content.startsWith(TRUNCATION_MARKER)).toBe(true);
    const tail = content.slice(TRUNCATION_MARKER.length);
    expect(tail.length).toBeGreaterThan(60_000);
    expect(last.content.endsWith(tail)).toBe(true);
    expect(result.stdout).toMatch(/snapshot: posted 1 message\(s\), \d+ bytes, last message truncated/);
  });

  // One line says what happened (v2.37+ has no endpoint: 404), and nothing fails.
  it.each([
    [404, "snapshot: Coder answered 404"],
    [500, "snapshot: Coder answered HTTP 500"],
  ] as const)("endpoint answering %i: logged, the stop still completes with exit 0", async (status, line) => {
    const { ws, before, result, coder } = await stopTask(status);
    expect(coder.requests).toHaveLength(1);
    expect(result.stdout).toContain(line);
    expect(snapshotLines(result)).toHaveLength(1);
    await expectKept(ws, result, before);
  });

  it("endpoint answering 307 to another server: not followed, that server gets no request and no token, the target is logged", async () => {
    const elsewhere = await CoderEndpoint.start(204);
    try {
      const target = `${elsewhere.url}/collect?from=redirect`;
      const { ws, before, result, coder } = await stopTask({ redirect: target });
      expect(coder.requests).toHaveLength(1);
      expect(elsewhere.requests).toEqual([]);
      expect(result.stdout).toContain(
        `snapshot: posting the snapshot failed: Coder answered HTTP 307, a redirect to ${target}, which is not followed`,
      );
      await expectKept(ws, result, before);
    } finally {
      await elsewhere.close();
    }
  });

  it("endpoint never answering: the stop completes within its bound", async () => {
    const { ws, before, result, coder } = await stopTask("never");
    expect(coder.requests).toHaveLength(1);
    expect(result.stdout).toContain("snapshot: posting the snapshot failed");
    // The request was given up on at the bound, not answered late.
    expect(phases(result.stdout).find((p) => p.name === "snapshot")?.ms).toBeGreaterThanOrEqual(HTTP_MS - 100);
    // A snapshot that never lands does not keep Goose from its graceful exit.
    await expectKept(ws, result, before);
  });

  it("not a task: no POST at all", async () => {
    const s = await setup();
    const coder = await coderEndpoint(204);
    s.ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: "agent-token" });
    await start(s.ws, s.rendered);
    await s.ws.send("hello");

    const result = await stop(s.ws, s.rendered);
    expect(result.code).toBe(0);
    expect(snapshotLines(result)).toEqual([
      expect.stringContaining("snapshot skipped: this workspace is not a Coder task"),
    ]);
    expect(coder.requests).toEqual([]);
    expect(await s.ws.processes()).toEqual([]);
  });
});

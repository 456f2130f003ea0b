// The stop script's task log snapshot (see stop.test.ts): what it POSTs to the
// stand-in for the Coder deployment, and how it treats that endpoint's answers.

import { describe, expect, it } from "vitest";
import { CoderEndpoint, gooseUnderTest, type RecordedRequest, type RunResult } from "../../support/workspace/index.js";
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
function snapshotLines(result: RunResult): string[] {
  return `${result.stdout}${result.stderr}`
    .split("\n")
    .filter((line) => line.includes("snapshot") && !/phase snapshot:/.test(line));
}

function expectSnapshotRequest(
  request: RecordedRequest | undefined,
  taskId: string,
  token: string,
): { messages: Message[] } {
  expect(request).toBeDefined();
  const r = request as RecordedRequest;
  expect(r.method).toBe("POST");
  expect(r.path).toBe(`/api/v2/workspaceagents/me/tasks/${taskId}/log-snapshot`);
  expect(r.query.get("format")).toBe("agentapi");
  expect(r.headers["coder-session-token"]).toBe(token);
  expect(r.headers["content-type"]).toMatch(/^application\/json/);
  return JSON.parse(r.body.toString("utf8"));
}

describe("stop: task log snapshot", () => {
  const prompt = "Fix the flaky test in ci.yml.";

  it("normal conversation: POSTs the messages with the agent token", async () => {
    const { ws, rendered, taskId, token, coder } = await taskSetup(204, prompt);
    await start(ws, rendered);
    await ws.send("Run the test suite.");
    const before = await ws.messages();

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(coder.requests).toHaveLength(1);
    const body = expectSnapshotRequest(coder.requests[0], taskId as string, token);
    expect(body.messages).toEqual(before);
    expect(result.stdout).toContain(`snapshot: posted ${before.length} message(s)`);
    // The snapshot is taken while Goose still runs, and the stop then ends it gracefully.
    expect(result.stdout.indexOf("snapshot: posted")).toBeLessThan(result.stdout.indexOf(GRACEFUL));
    await expectGracefulStop(ws, result);
    expect(await ws.processes()).toEqual([]);
  });

  it("more than 10 messages: only the last 10 are posted", async () => {
    const { ws, rendered, taskId, token, coder } = await taskSetup(204, prompt);
    await start(ws, rendered);
    for (let i = 1; i <= 6; i++) await ws.send(`Step ${i}: keep going.`);
    const before = await ws.messages();
    expect(before.length).toBeGreaterThan(10);

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    const body = expectSnapshotRequest(coder.requests[0], taskId as string, token);
    expect(body.messages).toEqual(before.slice(-10));
    expect(body.messages[0]?.id).toBe(before.length - 10);
    // The state file still holds all of them.
    expect(await stateMessages(ws)).toEqual(shape(before));
  });

  // Double-only: the double's GOOSE_DOUBLE_REPLY_LINES makes the huge reply; a
  // real Goose answers with the model stub's short replies.
  it.skipIf(gooseUnderTest().real)(
    "one huge message: the payload fits 64 KiB and ends with the message's tail",
    async () => {
      // No prompt here: one turn, whose reply is about 72 KB of screen text.
      const { ws, rendered, taskId, token, coder } = await taskSetup(204);
      ws.setEnv({ GOOSE_DOUBLE_REPLY_LINES: "900" });
      await start(ws, rendered);
      await ws.send("Print the whole build log.");
      const before = await ws.messages();
      const last = before[before.length - 1] as Message;
      expect(last.role).toBe("agent");
      expect(last.content).toContain("detail line 00900/00900");
      expect(Buffer.byteLength(JSON.stringify({ messages: [last] }))).toBeGreaterThan(SNAPSHOT_LIMIT);

      const result = await stop(ws, rendered);
      expect(result.code).toBe(0);
      const raw = coder.requests[0]?.body as Buffer;
      const body = expectSnapshotRequest(coder.requests[0], taskId as string, token);
      expect(raw.length).toBeLessThanOrEqual(SNAPSHOT_LIMIT);
      expect(raw.length).toBeGreaterThan(SNAPSHOT_LIMIT - 1024); // fitted, not gutted
      expect(body.messages).toHaveLength(1);
      const posted = body.messages[0] as Message;
      expect({ id: posted.id, role: posted.role, time: posted.time }).toEqual({
        id: last.id,
        role: last.role,
        time: last.time,
      });
      expect(posted.content.startsWith(TRUNCATION_MARKER)).toBe(true);
      const tail = posted.content.slice(TRUNCATION_MARKER.length);
      expect(tail.length).toBeGreaterThan(60_000);
      expect(last.content.endsWith(tail)).toBe(true);
      expect(result.stdout).toMatch(/snapshot: posted 1 message\(s\), \d+ bytes, last message truncated/);
    },
  );

  for (const status of [404, 500] as const) {
    it(`endpoint answering ${status}: logged, the stop still completes with exit 0`, async () => {
      const { ws, rendered, taskId, token, coder } = await taskSetup(status, prompt);
      await start(ws, rendered);
      await ws.send("Run the test suite.");
      const before = await ws.messages();

      const result = await stop(ws, rendered);
      expect(result.code).toBe(0);
      expect(coder.requests).toHaveLength(1);
      expectSnapshotRequest(coder.requests[0], taskId as string, token);
      expect(result.stdout).toContain(
        status === 404 ? "snapshot: Coder answered 404" : "snapshot: Coder answered HTTP 500",
      );
      // One line says what happened (v2.37+ has no endpoint: 404), and nothing fails.
      expect(snapshotLines(result)).toHaveLength(1);
      await expectGracefulStop(ws, result);
      expect(await stateMessages(ws)).toEqual(shape(before));
      expect(await ws.processes()).toEqual([]);
    });
  }

  it("endpoint answering 307 to another server: not followed, that server gets no request and no token, the target is logged", async () => {
    const elsewhere = await CoderEndpoint.start(204);
    try {
      const target = `${elsewhere.url}/collect?from=redirect`;
      const { ws, rendered, taskId, token, coder } = await taskSetup({ redirect: target }, prompt);
      await start(ws, rendered);
      await ws.send("Run the test suite.");
      const before = await ws.messages();

      const result = await stop(ws, rendered);
      expect(result.code).toBe(0);
      expect(coder.requests).toHaveLength(1);
      expectSnapshotRequest(coder.requests[0], taskId as string, token);
      expect(elsewhere.requests).toEqual([]);
      expect(result.stdout).toContain(
        `snapshot: posting the snapshot failed: Coder answered HTTP 307, a redirect to ${target}, which is not followed`,
      );
      await expectGracefulStop(ws, result);
      expect(await stateMessages(ws)).toEqual(shape(before));
      expect(await ws.processes()).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it("endpoint never answering: the stop completes within its bound", async () => {
    const { ws, rendered, coder } = await taskSetup("never", prompt);
    await start(ws, rendered);
    await ws.send("Run the test suite.");
    const before = await ws.messages();

    const result = await stop(ws, rendered);
    expect(result.code).toBe(0);
    expect(coder.requests).toHaveLength(1);
    expect(result.stdout).toContain("snapshot: posting the snapshot failed");
    const snapshot = phases(result.stdout).find((p) => p.name === "snapshot");
    // The request was given up on at the bound, not answered late.
    expect(snapshot?.ms).toBeGreaterThanOrEqual(HTTP_MS - 100);
    // A snapshot that never lands does not keep Goose from its graceful exit.
    await expectGracefulStop(ws, result);
    expect(await stateMessages(ws)).toEqual(shape(before));
    expect(await ws.processes()).toEqual([]);
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

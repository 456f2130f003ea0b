// telemetry: Goose's OpenTelemetry export reaches a local OTLP receiver with
// Coder's workspace identifiers, and the settings reach only the Goose that
// AgentAPI runs: not the supervisor, not the module's own `goose` helpers.

import { rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { childPids } from "../../support/workspace/index.js";
import {
  environOf,
  newWorkspace,
  PLAIN,
  render,
  start,
  stop,
  supervisors,
  theAgentapi,
  WORKSPACE_ID,
} from "./scenario.js";

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** An OTLP/HTTP receiver on loopback that answers 200 to every export and keeps each request. */
async function otlpReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const OTEL = "OTEL_EXPORTER_OTLP_ENDPOINT";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("telemetry", () => {
  it("Goose exports to the collector with Coder's identifiers; only the Goose AgentAPI runs gets the settings", async () => {
    const receiver = await otlpReceiver();
    closers.push(receiver.close);
    const ws = await newWorkspace();
    const rendered = await render(ws, {
      ...PLAIN,
      telemetry: {
        enabled: true,
        otlp_endpoint: receiver.url,
        otlp_headers: { Authorization: "Bearer a token, with=signs" },
        resource_attributes: { team: "platform" },
      },
    });

    await start(ws, rendered);
    await ws.waitStable();
    await ws.send("hello from the telemetry test");
    const agentapi = await theAgentapi(ws);
    const [goose] = await childPids(agentapi);
    expect((await environOf(goose as number)).get(OTEL)).toBe(receiver.url);
    const [supervisor] = await supervisors(ws);
    expect((await environOf(supervisor as number)).has(OTEL)).toBe(false);

    // Goose sends what it holds as it leaves: at the stop, at the latest.
    await stop(ws, rendered);
    const paths = new Set(receiver.received.map((r) => r.path));
    expect(paths).toContain("/v1/metrics");
    expect(paths).toContain("/v1/logs");
    for (const request of receiver.received) {
      expect(request.headers.authorization).toBe("Bearer a token, with=signs");
      for (const text of ["coder.workspace_id", WORKSPACE_ID, "team", "platform", "service.name", "goose"])
        expect(request.body.includes(text), `${request.path} carries ${text}`).toBe(true);
    }

    // Without the launch record, the next start asks Goose about its session
    // with a helper (goose session export), which must export nothing: the
    // double logs each run's environment (a real Goose logs none).
    await rm(`${ws.moduleDir}/agentapi-launch.json`);
    await start(ws, rendered);
    await ws.waitStable();
    if (!ws.goose.real) {
      const helpers = (await ws.events()).filter((e) => e.event === "start" && e.argv.includes("export"));
      expect(helpers.length).toBeGreaterThan(0);
      for (const helper of helpers) expect(helper.env[OTEL]).toBeNull();
    }
    await stop(ws, rendered);
  });
});

// A stand-in for the Coder deployment that the stop script talks to: it
// records every request and answers as told (204, 404, 500, a 307 redirect to
// another URL, or never). The
// stop script POSTs a task's log snapshot to
// /api/v2/workspaceagents/me/tasks/<task id>/log-snapshot?format=agentapi.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type EndpointAnswer = 204 | 404 | 500 | "never" | { redirect: string };

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The status it was answered with; null for "never". */
  answered: number | null;
}

export interface SnapshotPost {
  taskId: string;
  /** The Coder-Session-Token header carried the agent's token. */
  tokenMatched: boolean;
  format: string | null;
  bytes: number;
  /** How many messages the JSON body holds; -1 when it is not JSON with a messages array. */
  messages: number;
  answered: number | null;
}

const SNAPSHOT_PATH = /^\/api\/v2\/workspaceagents\/me\/tasks\/([^/]+)\/log-snapshot$/;

export class CoderEndpoint {
  readonly requests: RecordedRequest[] = [];
  /** The agent token scripts should send (CODER_AGENT_TOKEN). */
  readonly token = randomBytes(16).toString("hex");
  url = "";
  private readonly server: Server;

  private constructor(answer: EndpointAnswer) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        const answered = answer === "never" ? null : typeof answer === "object" ? 307 : answer;
        this.requests.push({
          method: req.method ?? "",
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body: Buffer.concat(chunks),
          answered,
        });
        if (answer === "never") return;
        if (answer === 204) return void res.writeHead(204).end();
        if (typeof answer === "object") return void res.writeHead(307, { Location: answer.redirect }).end();
        res
          .writeHead(answer, { "Content-Type": "application/json" })
          .end(
            JSON.stringify({ message: answer === 404 ? "Route not found." : "Internal error storing the task log." }),
          );
      });
    });
  }

  static async start(answer: EndpointAnswer = 204): Promise<CoderEndpoint> {
    const endpoint = new CoderEndpoint(answer);
    const { server } = endpoint;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return endpoint;
  }

  /** The log snapshot POSTs so far, oldest first. */
  snapshots(): SnapshotPost[] {
    return this.requests.flatMap((r) => {
      const match = SNAPSHOT_PATH.exec(r.path);
      if (r.method !== "POST" || !match) return [];
      return [
        {
          taskId: decodeURIComponent(match[1] ?? ""),
          tokenMatched: r.headers["coder-session-token"] === this.token,
          format: r.query.get("format"),
          bytes: r.body.length,
          messages: messageCount(r.body),
          answered: r.answered,
        },
      ];
    });
  }

  /** Stops listening and drops open connections (a request left unanswered included). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}

function messageCount(body: Buffer): number {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { messages?: unknown };
    return Array.isArray(parsed.messages) ? parsed.messages.length : -1;
  } catch {
    return -1;
  }
}

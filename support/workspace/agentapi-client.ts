// Talks to AgentAPI the way the Coder dashboard does: GET /status and
// /messages, POST /message.
import { readFile } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { tail, waitFor } from "./exec.js";

export interface ChatMessage {
  id: number;
  content: string;
  role: string;
  time?: string;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** AgentAPI silent this long while a wait is on: it went away, and waiting longer cannot help. */
const SILENT_MS = 3000;

export class AgentApiClient {
  constructor(
    readonly port: number,
    /** AgentAPI's log, quoted when it stops answering. */
    private readonly logFile: string,
    /** The bound for each wait on the agent. */
    readonly timeoutMs = 60_000,
  ) {}

  private url(route: string): string {
    return `http://127.0.0.1:${this.port}${route}`;
  }

  /**
   * The terminal screen AgentAPI sees: the first event of GET /internal/screen
   * (its web terminal's stream), on a connection closed right after it, which
   * would otherwise hold AgentAPI's HTTP shutdown when Goose exits.
   */
  screen(): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = "";
      const req = httpRequest({ host: "127.0.0.1", port: this.port, path: "/internal/screen", agent: false }, (res) => {
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          const [event] = text.split("\n\n");
          if (event === text) return;
          req.destroy();
          const data = (event as string).split("\n").filter((line) => line.startsWith("data:"));
          resolve((JSON.parse(data.map((line) => line.slice(5)).join("\n")) as { screen: string }).screen);
        });
      });
      req.setTimeout(5000, () => req.destroy(new Error("GET /internal/screen sent no event within 5 s")));
      req.on("error", reject);
      req.end();
    });
  }

  /** "stable", "running", or null when nothing answers. */
  async status(): Promise<string | null> {
    try {
      const response = await fetch(this.url("/status"), { signal: AbortSignal.timeout(2000) });
      return ((await response.json()) as { status: string }).status;
    } catch {
      return null;
    }
  }

  async messages(): Promise<ChatMessage[]> {
    const response = await fetch(this.url("/messages"), { signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`GET /messages answered ${response.status}`);
    return ((await response.json()) as { messages: ChatMessage[] }).messages;
  }

  /** POST /message: a chat message ("user"), or keystrokes typed into the agent's terminal ("raw"). */
  async post(content: string, type: "user" | "raw" = "user"): Promise<void> {
    const response = await fetch(this.url("/message"), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ content, type }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!response.ok) throw new Error(`POST /message answered ${response.status}: ${await response.text()}`);
  }

  /**
   * One request with the headers a proxy or a browser would send, Host
   * included (fetch() will not set Host), over a connection to 127.0.0.1.
   */
  raw(route: string, opts: { method?: string; headers: Record<string, string>; body?: string }): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: "127.0.0.1",
          port: this.port,
          path: route,
          method: opts.method ?? "GET",
          headers: opts.headers,
          timeout: this.timeoutMs,
        },
        (response) => {
          let body = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            body += chunk;
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
          response.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${opts.method ?? "GET"} ${route} got no answer`)));
      req.on("error", reject);
      req.end(opts.body);
    });
  }

  /** Polls until `check` holds, given the status; fails early, quoting AgentAPI's log, once AgentAPI stops answering. */
  async waitFor(
    what: string,
    check: (status: string) => boolean | Promise<boolean>,
    timeoutMs = this.timeoutMs,
  ): Promise<void> {
    let silentSince: number | null = null;
    await waitFor(
      what,
      async () => {
        const status = await this.status();
        if (status !== null) {
          silentSince = null;
          return check(status);
        }
        silentSince ??= Date.now();
        if (Date.now() - silentSince > SILENT_MS) {
          const log = await readFile(this.logFile, "utf8").catch(() => "(no log)");
          throw new Error(
            `AgentAPI stopped answering on port ${this.port} while waiting for ${what}. Last lines of ${this.logFile}:\n${tail(log, 15)}`,
          );
        }
        return false;
      },
      timeoutMs,
    );
  }

  waitStable(timeoutMs = this.timeoutMs): Promise<void> {
    return this.waitFor('AgentAPI status "stable"', (status) => status === "stable", timeoutMs);
  }

  /**
   * Sends a chat message the way the dashboard does and waits for the agent's
   * reply: counted by `replies` (AgentAPI's status alone cannot tell, because
   * Goose draws no spinner in some turns), then shown in /messages.
   */
  async send(content: string, replies: () => Promise<number>): Promise<void> {
    await this.waitStable();
    const before = await replies();
    const shown = (await this.messages()).length;
    await this.post(content);
    await this.waitFor(
      `the agent's reply to ${JSON.stringify(content.slice(0, 40))}`,
      async () => (await replies()) > before,
    );
    await this.waitFor("the reply in /messages", async (status) => {
      if (status !== "stable") return false;
      const now = await this.messages();
      return now.length >= shown + 2 && now[now.length - 1]?.role === "agent";
    });
  }
}

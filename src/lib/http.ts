import type { IncomingHttpHeaders, RequestOptions } from "node:http";

// The start and stop scripts make only small requests: to AgentAPI on
// loopback, and one POST to the Coder deployment. They go through node:http,
// not fetch: Node 18 and 20 load fetch's implementation (undici) on its first
// call, and in a fresh Node 20 process one POST took about 0.1 s longer with
// fetch than with node:http (npm run bench -- runtime), more than the whole
// idle stop takes now. Downloads, which need proxies, have their own client
// (install/download.ts).

export interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request, on a connection of its own, within one bound for the whole
 * exchange. A redirect is an answer like any other and is never followed, so
 * a header such as a token reaches only the URL it was given for. Rejects
 * with an error that says what happened.
 */
export async function request(
  url: string,
  opts: { method?: "GET" | "POST"; headers?: Record<string, string>; body?: string; timeoutMs: number },
): Promise<HttpReply> {
  const target = new URL(url);
  // Each loaded at its first request, not at the script's start: the start
  // sends none before AgentAPI runs, and the install none at all. TLS is the
  // costly part of starting node:https.
  const send = (await (target.protocol === "https:" ? import("node:https") : import("node:http"))).request;
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body, "utf8");
  const options: RequestOptions = {
    method: opts.method ?? "GET",
    headers: { ...opts.headers, ...(body ? { "Content-Length": String(body.length) } : {}) },
    agent: false,
  };
  return new Promise<HttpReply>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: Error) => settle(() => reject(error));
    const req = send(target, options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", fail);
      res.on("end", () =>
        settle(() =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
        ),
      );
    });
    const timer = setTimeout(() => {
      fail(new Error(`no complete answer within ${opts.timeoutMs} ms`));
      req.destroy();
    }, opts.timeoutMs);
    req.on("error", fail);
    req.end(body);
  });
}

export async function getJson<T>(
  url: string,
  timeoutMs: number,
): Promise<{ ok: true; status: number; body: T } | { ok: false; error: string }> {
  try {
    const reply = await request(url, { timeoutMs });
    if (reply.status < 200 || reply.status > 299) return { ok: false, error: `HTTP ${reply.status}` };
    return { ok: true, status: reply.status, body: JSON.parse(reply.body) as T };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/**
 * POSTs JSON to AgentAPI. A failure says whether AgentAPI answered: one that
 * answered with an error status refused the request; one that did not (the
 * connection closed or was refused, or no answer came in time) may still have
 * acted on it, as an AgentAPI does that leaves, with its agent, while the
 * request that made the agent leave is in flight.
 */
export async function postJson(
  url: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ ok: true; status: number } | { ok: false; answered: boolean; error: string }> {
  try {
    const reply = await request(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      timeoutMs,
    });
    return reply.status >= 200 && reply.status <= 299
      ? { ok: true, status: reply.status }
      : { ok: false, answered: true, error: `HTTP ${reply.status}` };
  } catch (error) {
    return { ok: false, answered: false, error: (error as Error).message };
  }
}

/**
 * The data of the first event a server-sent event stream sends, then the
 * connection is closed; the status of an answer that is not a 2xx; null when
 * no event comes within the bound.
 */
export async function firstEventData(
  url: string,
  timeoutMs: number,
): Promise<{ data: string } | { status: number } | null> {
  const { request: httpRequest } = await import("node:http");
  return new Promise((resolve) => {
    let text = "";
    const done = (got: { data: string } | { status: number } | null) => {
      clearTimeout(timer);
      req.destroy();
      resolve(got);
    };
    const req = httpRequest(url, { agent: false, headers: { Accept: "text/event-stream" } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) return done({ status });
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        const end = text.indexOf("\n\n");
        if (end === -1) return;
        const data = text
          .slice(0, end)
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart());
        done({ data: data.join("\n") });
      });
      res.on("error", () => done(null));
      res.on("end", () => done(null));
    });
    const timer = setTimeout(() => done(null), timeoutMs);
    req.on("error", () => done(null));
    req.end();
  });
}

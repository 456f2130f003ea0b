// A local stand-in for an OpenAI-compatible model provider, for running a real
// Goose (GOOSE_PROVIDER=openai, OPENAI_HOST=<url>) without a network or a key.
// node:http only. Replies are deterministic: `ack <n>: <the user's text>`,
// where n counts chat-completion requests. See README.md next to this file.
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

export interface ModelStubOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** The model `GET /v1/models` lists (default "gpt-4o"). Requests may name any model. */
  model?: string;
  /**
   * Wait this long (ms) in every chat completion before the reply's text is
   * sent. Default: env MODEL_STUB_DELAY_MS, else 0. A request can override it
   * with the `x-model-stub-delay-ms` header, or with `[model-stub:delay=MS]`
   * in its last user message (the only way through Goose).
   */
  delayMs?: number;
  /** JSONL request log (default: a file in a private folder under os.tmpdir(), removed by close()). */
  logFile?: string;
}

/** One line of the request log. */
export interface ModelStubRequest {
  /** ISO 8601 time the request arrived. */
  ts: string;
  /** 1, 2, ...: the request's number among chat completions (the n in `ack <n>`). */
  n: number;
  model: string | null;
  stream: boolean;
  /** The delay applied to this request, in ms. */
  delayMs: number;
  /** Every message's role and its text (string content, or its text parts joined with "\n"). */
  messages: Array<{ role: string; text: string }>;
  /** The reply the stub sent (or started sending). */
  reply: string;
}

export interface ModelStub {
  /** http://127.0.0.1:PORT (no path): the value for OPENAI_HOST. Routes are under /v1. */
  url: string;
  port: number;
  logFile: string;
  /** The request log so far, oldest first (every request is logged when it arrives, before any delay). */
  requests(): Promise<ModelStubRequest[]>;
  /** Changes the default delay for the requests that arrive from now on. */
  setDelay(ms: number): void;
  /** Stops listening, drops open connections (a delayed reply is never finished). */
  close(): Promise<void>;
}

export const DELAY_HEADER = "x-model-stub-delay-ms";
const DELAY_MARKER = /\[model-stub:delay=(\d+)\]/;
const TURN_CONTEXT = /<turn-context>[\s\S]*?<\/turn-context>/g;

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

/** A message's text: a string, or the `text` of its `{type:"text"}` parts joined with "\n". */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(
      (part): part is { type: "text"; text: string } =>
        typeof part === "object" &&
        part !== null &&
        (part as { type?: unknown }).type === "text" &&
        typeof (part as { text?: unknown }).text === "string",
    )
    .map((part) => part.text)
    .join("\n");
}

/**
 * The text the reply quotes: the last user message with something left once
 * Goose's hidden `<turn-context>` blocks are removed, whitespace collapsed.
 */
export function lastUserText(messages: Array<{ role: string; text: string }>): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role: string; text: string };
    if (m.role !== "user") continue;
    const text = m.text.replace(TURN_CONTEXT, " ").replace(/\s+/g, " ").trim();
    if (text !== "") return text;
  }
  return "";
}

export function replyFor(n: number, messages: Array<{ role: string; text: string }>): string {
  return `ack ${n}: ${lastUserText(messages).slice(0, 60)}`;
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function parseDelay(value: unknown): number | undefined {
  if (typeof value !== "string" || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string, type = "invalid_request_error"): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

/** Resolves after `ms`, or at once when the client has gone away. */
function wait(ms: number, res: ServerResponse): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    // Before the response ends, "close" means the client went away.
    res.on("close", done);
  });
}

/** The client is gone (Goose stopped mid-turn): nothing more to write. */
const gone = (res: ServerResponse) => res.destroyed || res.writableEnded || !res.socket || res.socket.destroyed;

/**
 * The Anthropic Messages API's answer (docs.anthropic.com, "Messages" and
 * "Streaming Messages"): one message object, or its stream of
 * message_start, one text block's start, deltas and stop, message_delta
 * (stop_reason, usage) and message_stop.
 */
async function anthropicReply(
  res: ServerResponse,
  m: {
    id: string;
    model: string;
    reply: string;
    stream: boolean;
    delayMs: number;
    promptTokens: number;
    completionTokens: number;
  },
): Promise<void> {
  const message = {
    id: m.id,
    type: "message",
    role: "assistant",
    model: m.model,
    content: [] as Array<{ type: "text"; text: string }>,
    stop_reason: null as string | null,
    stop_sequence: null,
    usage: { input_tokens: m.promptTokens, output_tokens: 0 },
  };
  if (!m.stream) {
    await wait(m.delayMs, res);
    if (gone(res)) return;
    sendJson(res, 200, {
      ...message,
      content: [{ type: "text", text: m.reply }],
      stop_reason: "end_turn",
      usage: { input_tokens: m.promptTokens, output_tokens: m.completionTokens },
    });
    return;
  }
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", { message });
  event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  await wait(m.delayMs, res);
  if (gone(res)) return;
  for (const piece of m.reply.match(/\S+\s*/g) ?? [m.reply]) {
    event("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
  }
  event("content_block_stop", { index: 0 });
  event("message_delta", {
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: m.completionTokens },
  });
  event("message_stop", {});
  res.end();
}

export async function startModelStub(opts: ModelStubOptions = {}): Promise<ModelStub> {
  const model = opts.model ?? "gpt-4o";
  let defaultDelay = opts.delayMs ?? parseDelay(process.env.MODEL_STUB_DELAY_MS) ?? 0;
  const ownDir = opts.logFile ? null : mkdtempSync(path.join(os.tmpdir(), "model-stub-"));
  const logFile = opts.logFile ?? path.join(ownDir as string, "requests.jsonl");
  appendFileSync(logFile, "");
  let count = 0;
  const created = () => Math.floor(Date.now() / 1000);

  const chat = async (req: IncomingMessage, res: ServerResponse, raw: string, api: "openai" | "anthropic") => {
    let body: { model?: unknown; messages?: unknown; stream?: unknown };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      sendError(res, 400, "the request body is not JSON");
      return;
    }
    if (typeof body !== "object" || body === null || !Array.isArray(body.messages)) {
      sendError(res, 400, "messages must be an array");
      return;
    }
    const n = ++count;
    const messages = (body.messages as ChatMessage[]).map((m) => ({
      role: typeof m?.role === "string" ? m.role : "",
      text: messageText(m?.content),
    }));
    const system = (body as { system?: unknown }).system;
    if (api === "anthropic" && system !== undefined) messages.unshift({ role: "system", text: messageText(system) });
    const lastUser = [...messages].reverse().find((m) => m.role === "user");
    const marker = lastUser ? DELAY_MARKER.exec(lastUser.text) : null;
    const delayMs = parseDelay(req.headers[DELAY_HEADER]) ?? (marker ? Number(marker[1]) : defaultDelay);
    const stream = body.stream === true;
    const requested = typeof body.model === "string" ? body.model : null;
    const reply = replyFor(n, messages);
    const record: ModelStubRequest = {
      ts: new Date().toISOString(),
      n,
      model: requested,
      stream,
      delayMs,
      messages,
      reply,
    };
    // Logged synchronously, before any delay: a test that sees the line knows the turn is under way.
    appendFileSync(logFile, `${JSON.stringify(record)}\n`);

    const id = `chatcmpl-stub-${n}`;
    const modelName = requested ?? model;
    const promptTokens = tokens(messages.map((m) => m.text).join("\n"));
    const completionTokens = tokens(reply);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };

    if (api === "anthropic")
      return anthropicReply(res, {
        id: `msg_stub_${n}`,
        model: modelName,
        reply,
        stream,
        delayMs,
        promptTokens,
        completionTokens,
      });

    if (!stream) {
      await wait(delayMs, res);
      if (gone(res)) return;
      sendJson(res, 200, {
        id,
        object: "chat.completion",
        created: created(),
        model: modelName,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: reply, refusal: null },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
        usage,
        system_fingerprint: "model-stub",
      });
      return;
    }

    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
    const at = created();
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: at, model: modelName, system_fingerprint: "model-stub", choices, ...extra })}\n\n`,
      );
    // The role first, at once: the turn has visibly started when a delay follows.
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]);
    await wait(delayMs, res);
    if (gone(res)) return;
    // The text in a few pieces (word by word), so clients really assemble a stream.
    for (const piece of reply.match(/\S+\s*/g) ?? [reply]) {
      chunk([{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }]);
    }
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }], { usage });
    res.end("data: [DONE]\n\n");
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const route = new URL(req.url ?? "/", "http://stub.local").pathname.replace(/\/+$/, "");
    if (route === "/v1/chat/completions" || route === "/chat/completions") {
      if (req.method !== "POST") return sendError(res, 405, `${req.method} is not allowed on ${route}`);
      return chat(req, res, raw, "openai");
    }
    if (route === "/v1/messages") {
      if (req.method !== "POST") return sendError(res, 405, `${req.method} is not allowed on ${route}`);
      return chat(req, res, raw, "anthropic");
    }
    if (route === "/v1/models" && req.method === "GET") {
      return sendJson(res, 200, {
        object: "list",
        data: [{ id: model, object: "model", created: 0, owned_by: "model-stub" }],
      });
    }
    const one = /^\/v1\/models\/(.+)$/.exec(route);
    if (one && req.method === "GET") {
      const name = decodeURIComponent(one[1] as string);
      if (name === model) return sendJson(res, 200, { id: model, object: "model", created: 0, owned_by: "model-stub" });
      return sendError(res, 404, `The model '${name}' does not exist`);
    }
    return sendError(res, 404, `no route ${req.method} ${route}`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, String((error as Error)?.message ?? error), "server_error");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | null = null;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    logFile,
    async requests() {
      const text = await readFile(logFile, "utf8").catch(() => "");
      return text
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as ModelStubRequest);
    },
    setDelay(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`delay must be a number of ms >= 0, not ${ms}`);
      defaultDelay = ms;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => {
        if (ownDir) rmSync(ownDir, { recursive: true, force: true });
      });
      return closed;
    },
  };
}

// The HTTP client side of model-stub.test.ts: a stub per test (closed after
// it), requests shaped as OpenAI's and Anthropic's clients send them, and the
// readings of their answers.

import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach } from "vitest";
import { type ModelStub, startModelStub } from "../../support/model-stub/server.js";
import { repoRoot } from "../../support/workspace/index.js";

const stubs: ModelStub[] = [];
afterEach(async () => {
  await Promise.all(stubs.splice(0).map((s) => s.close()));
});

export async function stub(opts: Parameters<typeof startModelStub>[0] = {}): Promise<ModelStub> {
  const s = await startModelStub(opts);
  stubs.push(s);
  return s;
}

/** POST /v1/chat/completions; a string body is sent as it is. */
export function post(
  s: ModelStub,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer anything", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: signal ?? AbortSignal.timeout(30_000),
  });
}

/** The reply text of a non-streaming chat completion for `messages` to gpt-4o. */
export async function replyTo(s: ModelStub, messages: unknown[], headers: Record<string, string> = {}) {
  const body = (await (await post(s, { model: "gpt-4o", messages }, headers)).json()) as any;
  return body.choices[0].message.content as string;
}

/** POST /v1/messages, as Anthropic's client sends it. */
export const messages = (s: ModelStub, body: unknown) =>
  fetch(`${s.url}/v1/messages`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "x-api-key": "anything", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });

/** The `data:` payloads of an SSE body, in order. */
export function sseData(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice("data: ".length));
}

/** The text of streamed chat.completion.chunk payloads (sseData without `[DONE]`). */
export const chunkText = (data: string[]) => data.map((d) => JSON.parse(d).choices[0].delta.content ?? "").join("");

export const user = (content: unknown) => ({ role: "user", content });

/** Runs `fn` with process.env[name] set to `value`, then puts it back. */
export async function withEnv<T>(name: string, value: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env[name];
  process.env[name] = value;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  }
}

/** support/model-stub/run.sh with `args`: the child, its first stdout line, and its exit code. */
export function stubCli(...args: string[]) {
  const child = spawn("bash", [path.join(repoRoot, "support", "model-stub", "run.sh"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", () => reject(new Error(`the CLI exited before printing a line:\n${stderr}`)));
  });
  return { child, firstLine, exited };
}

// The model stub (support/model-stub/server.ts) over real HTTP: what a real Goose
// with GOOSE_PROVIDER=openai and OPENAI_HOST pointing at it would see.
import { readlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startModelStub } from "../../support/model-stub/server.js";
import {
  GOOSE_DOUBLE,
  gooseDoubleDir,
  gooseUnderTest,
  linkGoose,
  repoRoot,
  run,
  Workspace,
  waitFor,
} from "../../support/workspace/index.js";
import { chunkText, messages, post, replyTo, sseData, stub, stubCli, user, withEnv } from "./model-stub-client.js";

describe("model stub", () => {
  it("answers a non-streaming chat completion with a deterministic reply and usage", async () => {
    const s = await stub();
    const response = await post(s, {
      model: "gpt-4o",
      messages: [{ role: "system", content: "be brief" }, user("  hello\n\n  world  ")],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "gpt-4o",
      choices: [{ index: 0, message: { role: "assistant", content: "ack 1: hello world" }, finish_reason: "stop" }],
    });
    expect(body.id).toEqual(expect.any(String));
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);

    // n counts requests.
    expect(await replyTo(s, [user("again")])).toBe("ack 2: again");
  });

  it("streams chat.completion.chunk events, a final chunk with finish_reason and usage, then [DONE]", async () => {
    const s = await stub();
    const response = await post(s, {
      model: "gpt-4o",
      stream: true,
      stream_options: { include_usage: true },
      messages: [user("stream me please")],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const data = sseData(await response.text());
    expect(data[data.length - 1]).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as any);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ object: "chat.completion.chunk", model: "gpt-4o", id: chunks[0].id });
      expect(chunk.choices).toHaveLength(1);
    }
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunkText(data.slice(0, -1))).toBe("ack 1: stream me please");
    const last = chunks[chunks.length - 1];
    expect(last.choices[0].finish_reason).toBe("stop");
    expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens);
    expect(chunks.slice(0, -1).every((c) => c.choices[0].finish_reason === null)).toBe(true);
  });

  it("reads text parts, quotes the last user message without Goose's turn context, 60 characters at most", async () => {
    const s = await stub();
    const long = "word ".repeat(30);
    const text = (t: string) => ({ type: "text", text: t });
    const parts = [text("first part"), { type: "image_url", image_url: { url: "data:," } }, text("second\tpart")];
    const earlier = [user("an earlier message"), { role: "assistant", content: "ack 0: earlier" }];
    expect(await replyTo(s, [...earlier, user(parts)])).toBe("ack 1: first part second part");
    const context = text("<turn-context>\nthe date is today\n</turn-context>");
    expect(await replyTo(s, [user([text(long), context])])).toBe(
      `ack 2: ${long.replace(/\s+/g, " ").trim().slice(0, 60)}`,
    );
    // Only the hidden context in the last user message: quote the one before it.
    expect(await replyTo(s, [user("visible text"), user("<turn-context>x</turn-context>")])).toBe(
      "ack 3: visible text",
    );
  });

  it("lists its model", async () => {
    const s = await stub({ model: "gpt-4o" });
    const list = (await (await fetch(`${s.url}/v1/models`)).json()) as any;
    expect(list).toMatchObject({ object: "list", data: [{ id: "gpt-4o", object: "model" }] });
    expect((await fetch(`${s.url}/v1/models/gpt-4o`)).status).toBe(200);
    expect((await fetch(`${s.url}/v1/models/nope`)).status).toBe(404);
  });

  it("logs every request as a JSON line: time, model, stream flag, roles and texts", async () => {
    const s = await stub();
    await replyTo(s, [{ role: "system", content: "sys" }, user([{ type: "text", text: "parts" }])]);
    await (await post(s, { model: "other-model", stream: true, messages: [user("streamed")] })).text();
    const log = await s.requests();
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({
      n: 1,
      model: "gpt-4o",
      stream: false,
      delayMs: 0,
      messages: [
        { role: "system", text: "sys" },
        { role: "user", text: "parts" },
      ],
      reply: "ack 1: parts",
    });
    expect(log[1]).toMatchObject({
      n: 2,
      model: "other-model",
      stream: true,
      messages: [{ role: "user", text: "streamed" }],
      reply: "ack 2: streamed",
    });
    for (const entry of log) expect(Number.isNaN(Date.parse(entry.ts))).toBe(false);
  });

  it("rejects what is not a chat completion, in OpenAI's error shape", async () => {
    const s = await stub();
    const bad = await post(s, "{not json");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.message).toEqual(expect.any(String));
    expect((await post(s, { model: "gpt-4o" })).status).toBe(400);
    expect((await fetch(`${s.url}/v1/nothing`)).status).toBe(404);
    expect(await s.requests()).toEqual([]);
  });

  it("holds a delayed reply back while later requests are answered (constructor option, header)", async () => {
    const s = await stub({ delayMs: 1500 });
    const finished: string[] = [];
    const slow = post(s, { model: "gpt-4o", stream: true, messages: [user("slow")] }).then(async (r) => {
      const text = sseData(await r.text());
      finished.push("slow");
      return text;
    });
    await waitFor("the slow request in the log", async () => (await s.requests()).length === 1, 10_000);
    expect(await replyTo(s, [user("fast")], { "x-model-stub-delay-ms": "0" })).toBe("ack 2: fast");
    finished.push("fast");
    const slowData = await slow;
    expect(finished).toEqual(["fast", "slow"]);
    expect(slowData[slowData.length - 1]).toBe("[DONE]");
    expect(chunkText(slowData.slice(0, -1))).toBe("ack 1: slow");
    expect((await s.requests()).map((r) => [r.n, r.delayMs])).toEqual([
      [1, 1500],
      [2, 0],
    ]);
  });

  it("lets a client stop mid-turn: the role arrives at once, the text never does (message marker, env default)", async () => {
    const s = await withEnv("MODEL_STUB_DELAY_MS", "60000", () => stub());
    for (const [content, delay] of [
      ["env default", 60_000],
      ["marker [model-stub:delay=45000]", 45_000],
    ] as const) {
      const abort = new AbortController();
      const response = await post(s, { model: "gpt-4o", stream: true, messages: [user(content)] }, {}, abort.signal);
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const [role] = sseData(first).map((d) => JSON.parse(d));
      expect(role.choices[0].delta).toEqual({ role: "assistant", content: "" });
      expect((await s.requests()).at(-1)).toMatchObject({
        delayMs: delay,
        messages: [{ role: "user", text: content }],
      });
      abort.abort();
      await reader.cancel().catch(() => undefined);
    }
    // The stub still answers, and closes with nothing pending.
    s.setDelay(0);
    expect(await replyTo(s, [user("after")])).toBe("ack 3: after");
  });

  it("closes with a delayed reply still pending", async () => {
    const s = await startModelStub({ delayMs: 60_000 });
    const pending = post(s, { model: "gpt-4o", messages: [user("never answered")] }).then(
      () => "answered",
      () => "failed",
    );
    await waitFor("the request in the log", async () => (await s.requests()).length === 1, 10_000);
    await s.close();
    expect(await pending).toBe("failed");
  });

  it("runs as a CLI that prints its URL", async () => {
    const cli = stubCli("--model", "gpt-4o");
    try {
      const url = await cli.firstLine;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
      const list = (await (await fetch(`${url}/v1/models`)).json()) as any;
      expect(list.data[0].id).toBe("gpt-4o");
    } finally {
      cli.child.kill("SIGTERM");
    }
    expect(await cli.exited).toBe(0);
  }, 60_000);
});

// The workspace simulator's GOOSE_BIN plumbing, driven with the double standing
// in for a "real" binary (it is an executable named goose): a symlink folder
// first on PATH, the stub's OPENAI_HOST, openai/gpt-4o, counts read from
// sessions.db.
describe("GOOSE_BIN plumbing in the workspace simulator", () => {
  const doubleBin = GOOSE_DOUBLE;

  it("uses the double when GOOSE_BIN is empty: its folder on PATH, the caller's provider and model", () => {
    // An empty value, not `undefined`, which would pick up this run's own GOOSE_BIN as the default.
    const goose = gooseUnderTest("");
    expect(goose).toMatchObject({ real: false, bin: doubleBin, pathDir: gooseDoubleDir, provider: null, model: null });
    expect(goose.vars({ goose_provider: "anthropic", goose_model: "m", other: 1 })).toEqual({
      goose_provider: "anthropic",
      goose_model: "m",
      other: 1,
    });
  });

  it("refuses a GOOSE_BIN that is not an executable file", () => {
    expect(() => gooseUnderTest(path.join(gooseDoubleDir, "missing"))).toThrow(/not an executable goose/);
    expect(() => gooseUnderTest(gooseDoubleDir)).toThrow(/not an executable goose/);
    expect(() => gooseUnderTest(path.join(gooseDoubleDir, "README.md"))).toThrow(/not an executable goose/);
  });

  it("with GOOSE_BIN: a goose symlink first on PATH, a model stub per workspace, counts from Goose's database", async () => {
    const goose = gooseUnderTest(doubleBin);
    expect(goose).toMatchObject({ real: true, bin: doubleBin, provider: "openai", model: "gpt-4o" });
    expect(path.dirname(goose.pathDir)).toBe(path.join(repoRoot, ".tmp"));
    expect(readlinkSync(path.join(goose.pathDir, "goose"))).toBe(doubleBin);
    // The same folder on every call and every run for that binary.
    expect(linkGoose(doubleBin, path.dirname(goose.pathDir), path.basename(goose.pathDir))).toBe(goose.pathDir);
    expect(goose.vars({ goose_provider: "anthropic", folder: "/x" })).toEqual({
      goose_provider: "openai",
      goose_model: "gpt-4o",
      folder: "/x",
    });

    const ws = await withEnv("GOOSE_BIN", doubleBin, () => Workspace.create());
    let stubUrl = "";
    try {
      const stub = ws.modelStub;
      expect(stub).not.toBeNull();
      stubUrl = stub!.url;
      const env = ws.env();
      expect(env.OPENAI_HOST).toBe(stub!.url);
      expect(env.OPENAI_API_KEY).toEqual(expect.any(String));
      expect(env.GOOSE_DOUBLE_EVENT_LOG).toBeUndefined();
      expect(String(env.PATH).split(":")[0]).toBe(goose.pathDir);
      expect((await (await fetch(`${env.OPENAI_HOST}/v1/models`)).json()) as unknown).toMatchObject({
        data: [{ id: "gpt-4o" }],
      });

      // Two turns through the goose found on PATH; the database has the answers.
      expect(await ws.deliveries("count me")).toBe(0);
      expect(await ws.replies()).toBe(0);
      for (const name of ["a", "b"]) {
        const turn = await run("goose", ["run", "--name", name, "--text", "count me"], {
          cwd: ws.home,
          env: { ...env, GOOSE_PROVIDER: "openai", GOOSE_MODEL: "gpt-4o", GOOSE_TELEMETRY_ENABLED: "false" },
        });
        expect(turn.code, turn.stderr).toBe(0);
      }
      expect(await ws.deliveries("count me")).toBe(2);
      expect(await ws.deliveries("count")).toBe(0);
      expect(await ws.replies()).toBe(2);
      expect(await ws.events()).toEqual([]);
    } finally {
      await ws.cleanup();
    }
    // cleanup() closed the stub.
    await expect(fetch(`${stubUrl}/v1/models`)).rejects.toThrow();
  });
});

describe("model stub: Anthropic's Messages API", () => {
  it("streams message_start, one text block's deltas, message_delta and message_stop, with the same reply", async () => {
    const s = await stub();
    const response = await messages(s, {
      model: "claude-sonnet-4-5",
      max_tokens: 64,
      stream: true,
      system: "be brief",
      messages: [user([{ type: "text", text: "hello there" }])],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = sseData(await response.text()).map((data) => JSON.parse(data) as any);
    const deltas = events.filter((e) => e.type === "content_block_delta");
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      ...deltas.map(() => "content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(deltas.map((e) => e.delta.text).join("")).toBe("ack 1: hello there");
    expect(events.find((e) => e.type === "message_delta").delta.stop_reason).toBe("end_turn");
    const [logged] = await s.requests();
    expect(logged?.messages).toEqual([
      { role: "system", text: "be brief" },
      { role: "user", text: "hello there" },
    ]);
  });

  it("answers without streaming with one message object", async () => {
    const s = await stub();
    const body = (await (await messages(s, { model: "m", max_tokens: 8, messages: [user("hi")] })).json()) as any;
    expect(body).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "ack 1: hi" }],
      stop_reason: "end_turn",
    });
  });
});

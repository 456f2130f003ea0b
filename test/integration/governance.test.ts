// AI governance end to end: Goose's model traffic through a stand-in for
// Coder's AI Gateway with the workspace owner's session token (a coder_env,
// as the Coder agent passes it), and Goose alone inside the Agent Firewall
// (boundary, or its stand-in). Runs with the Goose double, which calls the
// model the way Goose does when its provider host is set, or a real Goose.

import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CONTINUATION_TEXT } from "../../src/goose/interrupted-turn.js";
import { needsRoot } from "../../support/vitest/skips.js";
import {
  CoderEndpoint,
  childPids,
  freePort,
  gooseUnderTest,
  run,
  scratchDir,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import {
  build,
  chatText,
  endpoints,
  FIREWALL,
  FIREWALL_OUTPUTS,
  gooseOnPath,
  installFirewall,
  lastReply,
  modelTurns,
  NOBODY,
  newGateway,
  OPENAI,
  PROXY_URL,
  plantSwapper,
  rootOwnedCopies,
  TOKEN_1,
  TOKEN_2,
  tokenSightings,
  underAgentapi,
} from "./governance-scenario.js";
import {
  cmdline,
  environOf,
  flat,
  gaveUpReason,
  gaveUpWithoutRelaunch,
  launchRecord,
  newWorkspace,
  output,
  PROMPT,
  sendWithoutWaiting,
  setTurnMs,
  start,
  stop,
  supervisorLog,
  supervisors,
  theAgentapi,
  waitRestarted,
  waitTurns,
} from "./scenario.js";

/** Each assistant message Goose stored, oldest first: its content items' types, an error's with its kind. */
async function assistantContent(ws: Workspace): Promise<string[][]> {
  const sql = "SELECT content_json FROM messages WHERE role = 'assistant' ORDER BY id";
  const read = await run("sqlite3", ["-readonly", "-json", "-cmd", ".timeout 10000", ws.gooseDb, sql]);
  expect(read.code, read.stderr).toBe(0);
  const rows = JSON.parse(read.stdout.trim() || "[]") as Array<{ content_json: string }>;
  return rows.map((row) =>
    (JSON.parse(row.content_json) as Array<{ type: string; kind?: string }>).map((item) =>
      item.type === "error" ? `error ${item.kind}` : item.type,
    ),
  );
}

/** The names of the variables whose value holds `token`. */
const namesHolding = (environ: Map<string, string>, token: string) =>
  [...environ].filter(([, value]) => value.includes(token)).map(([name]) => name);

/** Which variables of AgentAPI's environment, and of the Goose it started (its child), hold `token`. */
async function holdersOf(agentapi: number, token: string) {
  const [goose] = await childPids(agentapi);
  return {
    agentapi: namesHolding(await environOf(agentapi), token),
    goose: namesHolding(await environOf(goose as number), token),
  };
}

describe("AI Gateway", () => {
  const providers = (ws: Workspace) => (ws.goose.real ? ["openai"] : ["anthropic", "openai"]);

  it("a conversation goes through the gateway as the workspace owner, for each provider it serves", async () => {
    const probe = await newWorkspace();
    for (const provider of providers(probe)) {
      const ws = provider === providers(probe)[0] ? probe : await newWorkspace();
      const gateway = await newGateway();
      const model = provider === "openai" ? "gpt-4o" : "claude-sonnet-4-5";
      const rendered = await build(ws, gateway, TOKEN_1, { goose_provider: provider, goose_model: model });
      await start(ws, rendered);
      await waitTurns(ws, 1);
      await ws.send("Which model answers through the gateway?");

      const turns = modelTurns(gateway);
      expect(turns.length, provider).toBeGreaterThanOrEqual(2);
      const route = provider === "openai" ? "/v1/chat/completions" : "/v1/messages";
      expect(new Set(turns.map((r) => `${r.provider} ${r.path} ${r.auth} ${r.tokenLabel}`))).toEqual(
        new Set([`${provider} ${route} accepted build-1`]),
      );
      expect(gateway.requests().filter((r) => r.auth !== "accepted")).toEqual([]);
      // The model's own answers (`ack <n>: <text>`) are what the chat shows.
      const answer = await lastReply(gateway);
      expect(answer).toMatch(/^ack \d+: Which model answers through the gateway\?/);
      expect(await chatText(ws)).toContain(flat(answer as string));
      await stop(ws, rendered);
    }
  });

  it("a request without the owner's current token is refused as Goose fails a turn; the next build's start carries the task's prompt on, once", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway("a-token-this-workspace-was-not-given", "other");
    const rendered = await build(ws, gateway, TOKEN_1, OPENAI);
    await start(ws, rendered);
    await ws.waitFor("the refused model request", async () => modelTurns(gateway).length > 0);
    await ws.waitFor("the failed turn in the chat", async () => /Authentication failed/.test(await chatText(ws)));

    expect(new Set(modelTurns(gateway).map((r) => r.auth))).toEqual(new Set(["wrong-token"]));
    expect(await gateway.stub.requests()).toEqual([]);
    expect(await chatText(ws)).toMatch(/401/);
    await stop(ws, rendered);
    // Goose keeps the failed call as an assistant message holding only the error
    // (Message::from_provider_error in crates/goose-provider-types/src/conversation/
    // message.rs, aaif-goose/goose v1.47.0): no answer.
    expect(await assistantContent(ws)).toEqual([["error authentication"]]);

    // The next build's token works: its start sees the task's prompt was never
    // answered and carries it on, and Goose sends the model the prompt, not the error.
    gateway.setToken(TOKEN_2, "build-2");
    const fixed = await build(ws, gateway, TOKEN_2, OPENAI);
    const resumed = await start(ws, fixed);
    expect(output(resumed)).toMatch(
      /interrupted turn: the last turn ended in a model error \(authentication\) on the first prompt; asking Goose to carry on/,
    );
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("continue");
    await ws.waitFor("the carried-on prompt answered", async () => (await assistantContent(ws)).length === 2);
    await ws.waitStable();
    const [request, ...more] = await gateway.stub.requests();
    expect(more).toEqual([]);
    const userText = request?.messages.filter((m) => m.role === "user").map((m) => m.text) ?? [];
    expect(userText.join("\n")).toContain(PROMPT);
    expect(userText.join("\n")).toContain(CONTINUATION_TEXT);
    expect(request?.messages.map((m) => m.text).join("\n")).not.toMatch(/Authentication failed|401/);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect(await ws.deliveries(CONTINUATION_TEXT)).toBe(1);
    await stop(ws, fixed);
    expect(await assistantContent(ws)).toEqual([["error authentication"], ["text"]]);

    // Answered now: the start after sends nothing.
    const again = await start(ws, fixed);
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("none");
    expect(output(again)).not.toMatch(/carry on/);
    await ws.waitStable();
    expect(await ws.deliveries(CONTINUATION_TEXT)).toBe(1);
    expect(await gateway.stub.requests()).toHaveLength(1);
    await stop(ws, fixed);
  });

  it("a message typed once the owner's token was revoked fails the same way, and is left to them: the next build's start sends nothing", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    const rendered = await build(ws, gateway, TOKEN_1, OPENAI);
    await start(ws, rendered);
    await waitTurns(ws, 1);
    gateway.setToken("a-token-this-workspace-was-not-given", "other");
    await ws.send("Now update the changelog.");
    expect(await chatText(ws)).toMatch(/Authentication failed/);
    await stop(ws, rendered);
    expect(await assistantContent(ws)).toEqual([["text"], ["error authentication"]]);

    gateway.setToken(TOKEN_2, "build-2");
    const fixed = await build(ws, gateway, TOKEN_2, OPENAI);
    const resumed = await start(ws, fixed);
    expect(output(resumed)).toMatch(
      /interrupted turn: the last turn ended in a model error \(authentication\) on a message typed in the chat: left to whoever typed it/,
    );
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("wait");
    await ws.waitStable();
    expect(await ws.deliveries(CONTINUATION_TEXT)).toBe(0);
    expect(await gateway.stub.requests()).toHaveLength(1);
    await stop(ws, fixed);
  });

  it("a new build's token is used by its start and its supervisor's restarts; no token is written anywhere", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    const first = await build(ws, gateway, TOKEN_1, OPENAI);
    await start(ws, first);
    await waitTurns(ws, 1);
    await stop(ws, first);

    // The next build: Coder issues a new token and the old one stops working.
    // It is a task, so its stop uploads a chat snapshot to the agent's Coder URL.
    gateway.setToken(TOKEN_2, "build-2");
    const taskEnv = { CODER_TASK_ID: randomUUID(), CODER_TASK_PROMPT: PROMPT };
    const second = await build(ws, gateway, TOKEN_2, OPENAI, taskEnv);
    const coder = await CoderEndpoint.start();
    endpoints.push(coder);
    ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: coder.token });
    const before = gateway.requests().length;
    await start(ws, second);
    await ws.send("First message of the second build.");
    const agentapi = await theAgentapi(ws);
    const fromStart = await holdersOf(agentapi, TOKEN_2);
    process.kill(agentapi, "SIGKILL");
    const restarted = await waitRestarted(ws, agentapi);
    await ws.send("After the supervisor's restart.");
    // AgentAPI hands its environment to Goose, and Goose's shell tool to every
    // command it runs: each holds the token once, as the provider's key, after
    // the start and after the supervisor's restart alike.
    for (const holders of [fromStart, await holdersOf(restarted, TOKEN_2)]) {
      expect(holders).toEqual({ agentapi: ["OPENAI_API_KEY"], goose: ["OPENAI_API_KEY"] });
    }

    const later = gateway.requests().slice(before);
    expect(later.filter((r) => r.method === "POST").length).toBeGreaterThanOrEqual(2);
    expect(new Set(later.map((r) => `${r.auth} ${r.tokenLabel}`))).toEqual(new Set(["accepted build-2"]));
    expect(await lastReply(gateway)).toMatch(/After the supervisor's restart\./);

    // The supervisor got the token the way Goose does, from the environment it
    // inherited, and never in its settings.
    const found = await supervisors(ws);
    expect(found).toHaveLength(1);
    const environ = await environOf(found[0] as number);
    const settings = environ.get("CODER_MODULE_SETTINGS");
    expect(settings).toBeDefined();
    expect(gunzipSync(Buffer.from(settings as string, "base64")).toString("utf8")).not.toContain(TOKEN_2);
    expect(namesHolding(environ, TOKEN_2)).toEqual(["CODER_GOOSE_AI_GATEWAY_TOKEN"]);

    await stop(ws, second);
    const [snapshot] = coder.requests.filter((r) => r.path.endsWith("/log-snapshot"));
    expect(snapshot?.body.toString("utf8")).toMatch(/After the supervisor's restart\./);
    for (const token of [TOKEN_1, TOKEN_2]) {
      expect(await tokenSightings(ws, [first, second], token)).toEqual([]);
      expect(snapshot?.body.includes(token)).toBe(false);
    }
    // The search itself finds what is there.
    await writeFile(path.join(ws.moduleDir, "logs", "planted.log"), `x${TOKEN_2}y`);
    expect(await tokenSightings(ws, [first, second], TOKEN_2)).toEqual([".coder-modules/coder/goose/logs/planted.log"]);
  });
});

/** A wrapper that runs the command after its `--` with no firewall. */
const UNCONFINED_WRAPPER = '#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n';

describe("AI Gateway token", () => {
  it("the supervisor's autosave helper, which needs no token, gets none", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    const rendered = await build(ws, gateway, TOKEN_1, OPENAI);
    await start(ws, rendered);
    // A turn long enough for the helper, which saves at the turn's end, to be read meanwhile.
    await setTurnMs(ws, 4000);
    await sendWithoutWaiting(ws, "A turn the supervisor saves after.");
    const helper = await ws.waitFor("the supervisor's autosave helper", async () => {
      for (const pid of await ws.processes()) if ((await cmdline(pid)).includes("goose-module-autosave")) return pid;
      return undefined;
    });
    const environ = await environOf(helper);
    // Its settings show it was read before it exited.
    expect(environ.has("CODER_MODULE_SETTINGS")).toBe(true);
    expect(namesHolding(environ, TOKEN_1)).toEqual([]);
    const [supervisor] = await supervisors(ws);
    expect(namesHolding(await environOf(supervisor as number), TOKEN_1)).toEqual(["CODER_GOOSE_AI_GATEWAY_TOKEN"]);
    await waitTurns(ws, 1);
    await stop(ws, rendered);
  });
});

describe("Agent Firewall", () => {
  it("Goose alone runs inside it and reaches the allowed gateway", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    const { config } = await installFirewall(ws, ["domain=127.0.0.1", "domain=coder.example.com"]);
    const rendered = await build(ws, gateway, TOKEN_1, { ...OPENAI, agent_firewall: FIREWALL_OUTPUTS });
    await start(ws, rendered);
    await waitTurns(ws, 1);
    await ws.send("Through the firewall.");
    expect(await lastReply(gateway)).toMatch(/Through the firewall\./);
    expect(gateway.requests().every((r) => r.auth === "accepted")).toBe(true);

    // AgentAPI starts the firewall, the firewall starts Goose: AgentAPI and
    // the module's helpers (its probes, the supervisor) run outside it.
    const agentapi = await theAgentapi(ws);
    const first = await underAgentapi(agentapi, `--config=${config}`);
    expect(first.prefix.slice(0, 3)).toEqual([`--config=${config}`, "--", gooseOnPath(ws)]);
    expect((await environOf(agentapi)).has("HTTP_PROXY")).toBe(false);
    expect((await environOf(first.goose)).get("HTTP_PROXY")).toMatch(PROXY_URL);

    await stop(ws, rendered);
  });

  it("a tool call's detached process that swaps in a wrapper after the restart's check, and puts the original back, gets no Goose outside it: while the wrapper is the user's, the supervisor relaunches nothing, and says why", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    await installFirewall(ws, ["domain=127.0.0.1"]);
    const wrapper = path.join(ws.home, FIREWALL_OUTPUTS.wrapper_path.replace("$HOME/", ""));
    const rendered = await build(ws, gateway, TOKEN_1, { ...OPENAI, agent_firewall: FIREWALL_OUTPUTS });
    expect(output(await start(ws, rendered))).toContain("will not restart it");
    const agentapi = await theAgentapi(ws);
    const config = path.join(ws.home, FIREWALL_OUTPUTS.config_path.replace("$HOME/", ""));
    const { goose } = await underAgentapi(agentapi, `--config=${config}`);

    // What a prompt injection would have Goose's shell tool do (a `!`
    // message is that tool's call): leave a process that swaps in a wrapper
    // without the firewall once the restart's check is over (at its first
    // goose command), which puts the original back when it runs, so that no
    // later check sees a change; then end Goose, which the supervisor
    // answered with a restart.
    const unconfined = path.join(ws.home, "goose-ran-unconfined");
    const fake = path.join(ws.home, "fake-wrapper.sh");
    const restore = `mv -f '${wrapper}.orig' '${wrapper}'\n: > '${unconfined}'\n`;
    await writeFile(fake, UNCONFINED_WRAPPER.replace("\n", `\n${restore}`), { mode: 0o755 });
    const swapper = await plantSwapper(ws, { trigger: ["session", "export"], target: wrapper, fake });
    await sendWithoutWaiting(ws, `!${swapper}; kill -KILL $PPID`);

    const reason = await gaveUpWithoutRelaunch(ws);
    expect(existsSync(unconfined)).toBe(false);
    // The tool call ended the Goose that ran it.
    expect(await cmdline(goose)).toEqual([]);
    expect(reason).toMatch(/^Restart the workspace to bring Goose back, and make .* root's \(README, AI governance\)/);
    expect(reason).toContain(`${wrapper}, `);
    expect(await gaveUpReason(ws)).toBe(reason);

    // The next start repeats why, and says the wrapper is the user's to rewrite.
    const next = output(await start(ws, rendered));
    expect(next).toContain(`the supervisor of the last run gave up: ${reason}`);
    const warning = next.split("\n").find((line) => line.includes("agent_firewall: "));
    expect(warning).toContain(`${wrapper}, `);
    expect(warning).toContain("can be rewritten by the workspace user");
    await stop(ws, rendered);
  });

  it("a runtime of the user's never runs for the supervisor: a detached process that swaps it in at the supervisor's check finds none to swap; no autosave, no relaunch, and the give-up says why", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    await installFirewall(ws, ["domain=127.0.0.1"]);
    // The module's own Node.js, which the coder_script prefers to any other,
    // as its bootstrap installs it: a file of the workspace user's.
    const runtime = path.join(ws.moduleDir, "node", "bin", "node");
    await mkdir(path.dirname(runtime), { recursive: true });
    await copyFile(process.execPath, runtime);
    const rendered = await build(ws, gateway, TOKEN_1, { ...OPENAI, agent_firewall: FIREWALL_OUTPUTS });
    const started = output(await start(ws, rendered));
    expect(started).toContain(`running the start script with ${runtime}`);
    expect(started).toContain("will not restart it");

    // At the supervisor's digest of the runtime (its sha256sum), before it
    // ran it for an autosave or a restart, a runtime that runs outside the
    // firewall, then the original.
    const unconfined = path.join(ws.home, "runtime-ran-unconfined");
    const fake = path.join(ws.home, "fake-node");
    await writeFile(
      fake,
      `#!/bin/sh\nmv -f '${runtime}.orig' '${runtime}'\n: > '${unconfined}'\nexec '${runtime}' "$@"\n`,
      {
        mode: 0o755,
      },
    );
    const swapper = await plantSwapper(ws, { trigger: ["sha256sum"], target: runtime, fake });
    await sendWithoutWaiting(ws, `!${swapper}; kill -KILL $PPID`);

    const reason = await gaveUpWithoutRelaunch(ws);
    expect(existsSync(unconfined)).toBe(false);
    expect(reason).toMatch(/^Restart the workspace to bring Goose back, and make .* root's \(README, AI governance\)/);
    expect(reason).toContain(runtime);
    const log = await supervisorLog(ws);
    expect(log).toContain(
      `no autosave (the runtime ${runtime}, which the autosave runs outside the Agent Firewall, can be rewritten by the workspace user`,
    );
    // No helper ran: the sh supervisor wrote the reason.
    expect(await gaveUpReason(ws)).toBe(reason);

    const next = output(await start(ws, rendered));
    expect(next).toContain(`the supervisor of the last run gave up: ${reason}`);
    await stop(ws, rendered);
  });

  it("with every file that confines Goose root's (the workspace user not root), the start warns of none, a tool call cannot swap the firewall, and a restart relaunches Goose inside it", async ({
    skip,
  }) => {
    skip(process.getuid?.() !== 0, needsRoot("running the workspace as another user, with files in /opt"));
    const under = gooseUnderTest();
    const bin = await rootOwnedCopies({
      goose: await realpath(path.join(under.pathDir, "goose")),
      agentapi: tools.agentapiUnderTest,
      boundary: FIREWALL,
    });
    const config = path.join(bin, "config.yaml");
    await writeFile(config, `allowlist:\n  - domain=127.0.0.1\njail_type: landjail\nproxy_port: ${await freePort()}\n`);
    const ws = await newWorkspace({
      user: NOBODY,
      goose: { ...under, pathDir: bin },
      agentapi: path.join(bin, "agentapi"),
    });
    const gateway = await newGateway();
    const firewall = path.join(bin, "boundary");
    const rendered = await build(ws, gateway, TOKEN_1, {
      ...OPENAI,
      agent_firewall: { command: [firewall, `--config=${config}`, "--"] },
    });
    const started = output(await start(ws, rendered));
    expect(started).not.toContain("agent_firewall: ");
    expect(started).toContain("restarts it if it exits without a stop");
    await waitTurns(ws, 1);
    const agentapi = await theAgentapi(ws);
    expect((await stat(`/proc/${agentapi}`)).uid).toBe(NOBODY.uid);
    const first = await underAgentapi(agentapi, `--config=${config}`);

    // The swap the tool call above made, tried on a file of root's, then Goose's end.
    const fake = path.join(ws.home, "fake-boundary");
    await writeFile(fake, UNCONFINED_WRAPPER, { mode: 0o755 });
    await sendWithoutWaiting(ws, `!mv -f '${fake}' '${firewall}'; kill -KILL $PPID`);
    const restarted = await waitRestarted(ws, agentapi);
    expect(await readFile(firewall, "utf8")).not.toBe(UNCONFINED_WRAPPER);
    const second = await underAgentapi(restarted, `--config=${config}`);
    expect(second.prefix.slice(0, 3)).toEqual(first.prefix.slice(0, 3));
    expect((await environOf(second.goose)).get("HTTP_PROXY")).toMatch(PROXY_URL);
    // The model through the allowed gateway (a real Goose sends the unanswered `!` line along with it).
    const turns = modelTurns(gateway).length;
    await ws.send("Still inside after the restart.");
    expect(modelTurns(gateway).length).toBeGreaterThan(turns);
    expect(gateway.requests().every((r) => r.auth === "accepted")).toBe(true);
    await stop(ws, rendered);
  });

  it("a model request to an address the allow-list does not name is blocked, and the turn fails", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    await installFirewall(ws, ["domain=coder.example.com"]);
    const rendered = await build(ws, gateway, TOKEN_1, { ...OPENAI, agent_firewall: FIREWALL_OUTPUTS });
    await start(ws, rendered);
    // The firewall's 403, which Goose reports as an authentication failure,
    // wrapped at the 80 columns of AgentAPI's terminal.
    const unwrapped = async () => (await chatText(ws)).replace(/\s+/g, "");
    await ws.waitFor("the blocked turn in the chat", async () => /Status:403Forbidden/.test(await unwrapped()));
    expect(gateway.requests()).toEqual([]);
    // No answer: Goose stored the failed call alone (upstream Goose 1.47.0 stores it as an error message).
    expect((await assistantContent(ws)).flat().every((item) => item === "error authentication")).toBe(true);
    await stop(ws, rendered);
  });

  it("a generic command prefix works the same way", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway();
    // A hostile folder name: the prefix is argv, never shell source.
    const logs = path.join(await scratchDir("firewall"), "logs $(touch pwned) 'q' \"x\" ;");
    const prefix = [
      ...["--jail-type", "landjail", "--proxy-port", String(await freePort()), "--log-dir", logs],
      ...["--allow", "domain=127.0.0.1", "--"],
    ];
    const rendered = await build(ws, gateway, TOKEN_1, {
      ...OPENAI,
      agent_firewall: { command: [FIREWALL, ...prefix] },
    });
    await start(ws, rendered);
    await waitTurns(ws, 1);
    const { prefix: seen, goose } = await underAgentapi(await theAgentapi(ws), "--jail-type");
    expect(seen.slice(0, prefix.length + 1)).toEqual([...prefix, gooseOnPath(ws)]);
    for (const dir of [ws.home, path.join(ws.home, "project")]) expect(await readdir(dir)).not.toContain("pwned");
    expect((await environOf(goose)).get("HTTP_PROXY")).toMatch(PROXY_URL);
    expect(modelTurns(gateway).length).toBeGreaterThan(0);
    expect(modelTurns(gateway).every((r) => r.auth === "accepted")).toBe(true);
    await stop(ws, rendered);
  });
});

// AI governance end to end: Goose's model traffic through a stand-in for
// Coder's AI Gateway with the workspace owner's session token (a coder_env,
// as the Coder agent passes it), and Goose alone inside the Agent Firewall:
// boundary itself when tools/setup.sh could build it, else a stand-in
// (support/agent-firewall/README.md).
// Runs with the Goose double, which calls the model the way Goose does when
// its provider host is set, or with a real Goose from GOOSE_BIN.

import { randomUUID } from "node:crypto";
import { chmod, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { type AiGatewayStandIn, startAiGateway } from "../../support/ai-gateway/server.js";
import {
  CoderEndpoint,
  childPids,
  freePort,
  type Rendered,
  readCmdline,
  repoRoot,
  resourceValues,
  scratchDir,
  type Workspace,
} from "../../support/workspace/index.js";
import { agentapiPids, flat, newWorkspace, PROMPT, render, start, stop, waitTurns } from "./scenario.js";

const TOKEN_1 = "coder-session-build-1-Zq8vN3";
const TOKEN_2 = "coder-session-build-2-Hw5pK7";
const STANDIN = path.join(repoRoot, "support", "agent-firewall", "boundary-standin");

const gateways: AiGatewayStandIn[] = [];
const endpoints: CoderEndpoint[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
  for (const endpoint of endpoints.splice(0)) await endpoint.close();
});

async function newGateway(token: string, label: string): Promise<AiGatewayStandIn> {
  const gateway = await startAiGateway({ token, label });
  gateways.push(gateway);
  return gateway;
}

/**
 * One workspace build: the module rendered for a deployment at the gateway's
 * URL with this build's session token, and every coder_env it declares given
 * to the scripts, as the Coder agent does.
 */
async function build(
  ws: Workspace,
  gateway: AiGatewayStandIn,
  token: string,
  vars: Record<string, unknown> = {},
  coderEnv: Record<string, string> = {},
): Promise<Rendered> {
  const rendered = await render(
    ws,
    { enable_ai_gateway: true, ...vars },
    { CODER_AGENT_URL: gateway.url, CODER_WORKSPACE_OWNER_SESSION_TOKEN: token, ...coderEnv },
  );
  const env = resourceValues(rendered, "module.goose.coder_env.ai_gateway_token[0]");
  ws.setEnv({ [String(env.name)]: String(env.value) });
  return rendered;
}

const modelTurns = (gateway: AiGatewayStandIn) =>
  gateway.requests().filter((r) => r.method === "POST" && /^\/v1\/(chat\/completions|messages)$/.test(r.path));

const chatText = async (ws: Workspace) => (await ws.messages()).map((m) => flat(m.content)).join("\n");

/** Every regular file under `dir`, Goose's own databases included. */
async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(full)));
    else if (entry.isFile()) found.push(full);
  }
  return found;
}

/** The coder_script with its gzip+base64 code and settings decoded, as one text. */
function decodedScript(script: string): string {
  const parts = [script];
  for (const name of ["CODER_MODULE_SCRIPT", "CODER_MODULE_SETTINGS"]) {
    const encoded = new RegExp(`${name}='([A-Za-z0-9+/=]+)'`).exec(script)?.[1];
    expect(encoded, `${name} in the rendered script`).toBeDefined();
    parts.push(gunzipSync(Buffer.from(encoded as string, "base64")).toString("utf8"));
  }
  return parts.join("\n");
}

/** Where a token shows up: files under HOME, and the rendered scripts decoded. */
async function tokenSightings(ws: Workspace, rendered: Rendered[], token: string): Promise<string[]> {
  const seen: string[] = [];
  for (const file of await filesUnder(ws.home)) {
    if ((await readFile(file)).includes(token)) seen.push(path.relative(ws.home, file));
  }
  rendered.forEach((r, i) => {
    if (decodedScript(r.start).includes(token)) seen.push(`start script of build ${i + 1}`);
    if (decodedScript(r.stop).includes(token)) seen.push(`stop script of build ${i + 1}`);
  });
  return seen;
}

async function environOf(pid: number): Promise<Map<string, string>> {
  const text = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
  return new Map(
    text
      .split("\0")
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );
}

async function theAgentapi(ws: Workspace): Promise<number> {
  const pids = await agentapiPids(ws);
  expect(pids).toHaveLength(1);
  return pids[0] as number;
}

/** A new AgentAPI, not `old`, answering and settled. */
async function waitRestarted(ws: Workspace, old: number): Promise<number> {
  const pid = await ws.waitFor("the supervisor's restart of AgentAPI", async () => {
    const [now] = await agentapiPids(ws);
    return now !== undefined && now !== old && (await ws.status()) !== null ? now : undefined;
  });
  await ws.waitStable();
  return pid;
}

describe("AI Gateway", () => {
  const providers = (ws: Workspace) => (ws.goose.real ? ["openai"] : ["anthropic", "openai"]);

  it("a conversation goes through the gateway as the workspace owner, for each provider it serves", async () => {
    const probe = await newWorkspace();
    for (const provider of providers(probe)) {
      const ws = provider === providers(probe)[0] ? probe : await newWorkspace();
      const gateway = await newGateway(TOKEN_1, "build-1");
      const model = provider === "openai" ? "gpt-4o" : "claude-sonnet-4-5";
      const rendered = await build(ws, gateway, TOKEN_1, { goose_provider: provider, goose_model: model });
      await start(ws, rendered);
      await waitTurns(ws, 1);
      await ws.send("Which model answers through the gateway?");

      const turns = modelTurns(gateway);
      expect(turns.length, provider).toBeGreaterThanOrEqual(2);
      expect(new Set(turns.map((r) => `${r.provider} ${r.path} ${r.auth} ${r.tokenLabel}`))).toEqual(
        new Set([`${provider} ${provider === "openai" ? "/v1/chat/completions" : "/v1/messages"} accepted build-1`]),
      );
      expect(gateway.requests().filter((r) => r.auth !== "accepted")).toEqual([]);
      // The model's own answers (`ack <n>: <text>`) are what the chat shows.
      const answers = (await gateway.stub.requests()).map((r) => r.reply);
      expect(answers.at(-1)).toMatch(/^ack \d+: Which model answers through the gateway\?/);
      expect(await chatText(ws)).toContain(flat(answers.at(-1) as string));
      await stop(ws, rendered);
    }
  });

  it("a request without the owner's current token is refused, and the turn fails the way Goose's does", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway("a-token-this-workspace-was-not-given", "other");
    const rendered = await build(ws, gateway, TOKEN_1, { goose_provider: "openai", goose_model: "gpt-4o" });
    await start(ws, rendered);
    await ws.waitFor("the refused model request", async () => modelTurns(gateway).length > 0);
    await ws.waitFor("the failed turn in the chat", async () => /Authentication failed/.test(await chatText(ws)));

    expect(new Set(modelTurns(gateway).map((r) => r.auth))).toEqual(new Set(["wrong-token"]));
    expect(await gateway.stub.requests()).toEqual([]);
    expect(await chatText(ws)).toMatch(/401/);
    expect(await ws.replies()).toBe(0);
    await stop(ws, rendered);
  });

  it("a new build's token is the one the next start and that build's supervisor restarts use; no token is written anywhere", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway(TOKEN_1, "build-1");
    const vars = { goose_provider: "openai", goose_model: "gpt-4o" };
    const first = await build(ws, gateway, TOKEN_1, vars);
    await start(ws, first);
    await waitTurns(ws, 1);
    await stop(ws, first);

    // The next build: Coder issues a new token and the old one stops working.
    // It is a task, so its stop uploads a chat snapshot to the agent's Coder URL.
    gateway.setToken(TOKEN_2, "build-2");
    const second = await build(ws, gateway, TOKEN_2, vars, { CODER_TASK_ID: randomUUID(), CODER_TASK_PROMPT: PROMPT });
    const coder = await CoderEndpoint.start();
    endpoints.push(coder);
    ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: coder.token });
    const before = gateway.requests().length;
    await start(ws, second);
    await ws.send("First message of the second build.");
    const agentapi = await theAgentapi(ws);
    process.kill(agentapi, "SIGKILL");
    await waitRestarted(ws, agentapi);
    await ws.send("After the supervisor's restart.");

    const later = gateway.requests().slice(before);
    expect(later.filter((r) => r.method === "POST").length).toBeGreaterThanOrEqual(2);
    expect(new Set(later.map((r) => `${r.auth} ${r.tokenLabel}`))).toEqual(new Set(["accepted build-2"]));
    expect((await gateway.stub.requests()).at(-1)?.reply).toMatch(/After the supervisor's restart\./);

    // The supervisor got the token the way Goose does, from the environment it
    // inherited, and never in its settings.
    const supervisors: number[] = [];
    for (const pid of await ws.processes())
      if ((await readCmdline(pid))?.includes("goose-module-supervisor")) supervisors.push(pid);
    expect(supervisors).toHaveLength(1);
    const environ = await environOf(supervisors[0] as number);
    const settings = environ.get("CODER_MODULE_SETTINGS");
    expect(settings).toBeDefined();
    expect(gunzipSync(Buffer.from(settings as string, "base64")).toString("utf8")).not.toContain(TOKEN_2);
    expect(environ.get("CODER_GOOSE_AI_GATEWAY_TOKEN")).toBe(TOKEN_2);

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

// The real firewall when tools/setup.sh could build it (BOUNDARY_BIN), else
// the stand-in. The real one runs as landjail here: Landlock confines TCP
// connections to its proxy's port (nsjail needs iptables, which this sandbox
// lacks).
const FIREWALL = process.env.BOUNDARY_BIN || STANDIN;

/**
 * The agent-firewall module's files in the workspace, as its install script
 * writes them (registry/coder/modules/agent-firewall/scripts/install.sh.tftpl
 * @ 6be121e4): a wrapper that execs the firewall, and its config.
 */
async function installFirewall(ws: Workspace, allowlist: string[]): Promise<{ config: string }> {
  const dir = path.join(ws.home, ".coder-modules", "coder", "agent-firewall");
  await mkdir(path.join(dir, "scripts"), { recursive: true });
  await mkdir(path.join(dir, "config"), { recursive: true });
  const wrapper = path.join(dir, "scripts", "agent-firewall-wrapper.sh");
  await writeFile(wrapper, `#!/usr/bin/env bash\nset -euo pipefail\nexec ${JSON.stringify(FIREWALL)} "$@"\n`);
  await chmod(wrapper, 0o755);
  const config = path.join(dir, "config", "config.yaml");
  await writeFile(
    config,
    [
      "allowlist:",
      ...allowlist.map((rule) => `  - ${rule}`),
      "jail_type: landjail",
      `proxy_port: ${await freePort()}`,
      `log_dir: ${path.join(dir, "logs")}`,
      "",
    ].join("\n"),
  );
  return { config };
}

const MODULE_OUTPUTS = {
  wrapper_path: "$HOME/.coder-modules/coder/agent-firewall/scripts/agent-firewall-wrapper.sh",
  config_path: "$HOME/.coder-modules/coder/agent-firewall/config/config.yaml",
};

/** Every process below `pid`, breadth first. */
async function descendants(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const children = await childPids(queue.shift() as number);
    found.push(...children);
    queue = [...queue, ...children];
  }
  return found;
}

/**
 * What runs under AgentAPI: the firewall (AgentAPI's child; its command line
 * from `from` on, which is where the module's prefix begins) and Goose below it.
 */
async function underAgentapi(agentapi: number, from: string) {
  const [firewall] = await childPids(agentapi);
  const argv = (await readCmdline(firewall as number)) ?? [];
  const at = argv.indexOf(from);
  expect(at, `${from} in the firewall's command line ${JSON.stringify(argv)}`).toBeGreaterThan(0);
  const gooseBin = argv[argv.indexOf("--", at) + 1] as string;
  let goose: number | undefined;
  for (const pid of await descendants(firewall as number)) {
    const cmd = (await readCmdline(pid)) ?? [];
    if (cmd.slice(0, 2).includes(gooseBin)) goose = pid;
  }
  expect(goose, "Goose below the firewall").toBeDefined();
  return { firewall: firewall as number, prefix: argv.slice(at), goose: goose as number };
}

/** The goose the start finds on PATH (for a real Goose, the link the simulator makes to it). */
const gooseOnPath = (ws: Workspace) => path.join(ws.goose.pathDir, "goose");

const PROXY_URL = /^http:\/\/(127\.0\.0\.1|localhost):\d+$/;

describe("Agent Firewall", () => {
  it("Goose alone runs inside it, reaches the allowed gateway, and a supervisor restart uses the same wrapper", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway(TOKEN_1, "build-1");
    const { config } = await installFirewall(ws, ["domain=127.0.0.1", "domain=coder.example.com"]);
    const rendered = await build(ws, gateway, TOKEN_1, {
      goose_provider: "openai",
      goose_model: "gpt-4o",
      agent_firewall: MODULE_OUTPUTS,
    });
    await start(ws, rendered);
    await waitTurns(ws, 1);
    await ws.send("Through the firewall.");
    expect((await gateway.stub.requests()).at(-1)?.reply).toMatch(/Through the firewall\./);
    expect(gateway.requests().every((r) => r.auth === "accepted")).toBe(true);

    // AgentAPI starts the firewall, the firewall starts Goose: AgentAPI and
    // the module's helpers (its probes, the supervisor) run outside it.
    const agentapi = await theAgentapi(ws);
    const first = await underAgentapi(agentapi, `--config=${config}`);
    expect(first.prefix.slice(0, 3)).toEqual([`--config=${config}`, "--", gooseOnPath(ws)]);
    expect((await environOf(agentapi)).has("HTTP_PROXY")).toBe(false);
    expect((await environOf(first.goose)).get("HTTP_PROXY")).toMatch(PROXY_URL);

    process.kill(agentapi, "SIGKILL");
    const restarted = await waitRestarted(ws, agentapi);
    await ws.send("Still inside after the restart.");
    const second = await underAgentapi(restarted, `--config=${config}`);
    expect(second.prefix.slice(0, 3)).toEqual(first.prefix.slice(0, 3));
    expect((await environOf(second.goose)).get("HTTP_PROXY")).toMatch(PROXY_URL);
    expect((await gateway.stub.requests()).at(-1)?.reply).toMatch(/Still inside after the restart\./);
    await stop(ws, rendered);
  });

  it("a model request to an address the allow-list does not name is blocked, and the turn fails", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway(TOKEN_1, "build-1");
    await installFirewall(ws, ["domain=coder.example.com"]);
    const rendered = await build(ws, gateway, TOKEN_1, {
      goose_provider: "openai",
      goose_model: "gpt-4o",
      agent_firewall: MODULE_OUTPUTS,
    });
    await start(ws, rendered);
    // The firewall's 403, which Goose reports as an authentication failure.
    await ws.waitFor("the blocked turn in the chat", async () => /Status: 403 Forbidden/.test(await chatText(ws)));
    expect(gateway.requests()).toEqual([]);
    expect(await ws.replies()).toBe(0);
    await stop(ws, rendered);
  });

  it("a generic command prefix works the same way", async () => {
    const ws = await newWorkspace();
    const gateway = await newGateway(TOKEN_1, "build-1");
    // A hostile folder name: the prefix is argv, never shell source.
    const logs = path.join(await scratchDir("firewall"), "logs $(touch pwned) 'q' \"x\" ;");
    const prefix = [
      ...["--jail-type", "landjail", "--proxy-port", String(await freePort()), "--log-dir", logs],
      ...["--allow", "domain=127.0.0.1", "--"],
    ];
    const rendered = await build(ws, gateway, TOKEN_1, {
      goose_provider: "openai",
      goose_model: "gpt-4o",
      agent_firewall: { command: [FIREWALL, ...prefix] },
    });
    await start(ws, rendered);
    await waitTurns(ws, 1);
    const { prefix: seen, goose } = await underAgentapi(await theAgentapi(ws), "--jail-type");
    expect(seen.slice(0, prefix.length + 1)).toEqual([...prefix, gooseOnPath(ws)]);
    expect(
      (await readdir(ws.home)).includes("pwned") || (await readdir(path.join(ws.home, "project"))).includes("pwned"),
    ).toBe(false);
    expect((await environOf(goose)).get("HTTP_PROXY")).toMatch(PROXY_URL);
    expect(modelTurns(gateway).length).toBeGreaterThan(0);
    expect(modelTurns(gateway).every((r) => r.auth === "accepted")).toBe(true);
    await stop(ws, rendered);
  });
});

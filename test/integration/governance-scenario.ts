// What governance.test.ts shares: a stand-in AI Gateway per test, the module
// rendered for one workspace build with that build's session token, where a
// token shows up, and the Agent Firewall's files and process tree.

import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, expect } from "vitest";
import { type AiGatewayStandIn, startAiGateway } from "../../support/ai-gateway/server.js";
import {
  type CoderEndpoint,
  childPids,
  freePort,
  type Rendered,
  readCmdline,
  repoRoot,
  resourceValues,
  type Workspace,
} from "../../support/workspace/index.js";
import { flat, render } from "./scenario.js";

export const TOKEN_1 = "coder-session-build-1-Zq8vN3";
export const TOKEN_2 = "coder-session-build-2-Hw5pK7";
export const OPENAI = { goose_provider: "openai", goose_model: "gpt-4o" };

const gateways: AiGatewayStandIn[] = [];
export const endpoints: CoderEndpoint[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
  for (const endpoint of endpoints.splice(0)) await endpoint.close();
});

export async function newGateway(token = TOKEN_1, label = "build-1"): Promise<AiGatewayStandIn> {
  const gateway = await startAiGateway({ token, label });
  gateways.push(gateway);
  return gateway;
}

/**
 * One workspace build: the module rendered for a deployment at the gateway's
 * URL with this build's session token, and every coder_env it declares given
 * to the scripts, as the Coder agent does.
 */
export async function build(
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

export const modelTurns = (gateway: AiGatewayStandIn) =>
  gateway.requests().filter((r) => r.method === "POST" && /^\/v1\/(chat\/completions|messages)$/.test(r.path));

export const lastReply = async (gateway: AiGatewayStandIn) => (await gateway.stub.requests()).at(-1)?.reply;

export const chatText = async (ws: Workspace) => (await ws.messages()).map((m) => flat(m.content)).join("\n");

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
export async function tokenSightings(ws: Workspace, rendered: Rendered[], token: string): Promise<string[]> {
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

// The real firewall when tools/setup.sh could build it (BOUNDARY_BIN), else
// the stand-in (support/agent-firewall/README.md). The real one runs as
// landjail here: Landlock confines TCP connections to its proxy's port
// (nsjail needs iptables, which this sandbox lacks).
export const FIREWALL =
  process.env.BOUNDARY_BIN || path.join(repoRoot, "support", "agent-firewall", "boundary-standin");

/**
 * The agent-firewall module's files in the workspace, as its install script
 * writes them (registry/coder/modules/agent-firewall/scripts/install.sh.tftpl
 * @ 6be121e4): a wrapper that execs the firewall, and its config.
 */
export async function installFirewall(ws: Workspace, allowlist: string[]): Promise<{ config: string }> {
  const dir = path.join(ws.home, ".coder-modules", "coder", "agent-firewall");
  await mkdir(path.join(dir, "scripts"), { recursive: true });
  await mkdir(path.join(dir, "config"), { recursive: true });
  const wrapper = path.join(dir, "scripts", "agent-firewall-wrapper.sh");
  await writeFile(wrapper, `#!/usr/bin/env bash\nset -euo pipefail\nexec ${JSON.stringify(FIREWALL)} "$@"\n`);
  await chmod(wrapper, 0o755);
  const config = path.join(dir, "config", "config.yaml");
  const rules = allowlist.map((rule) => `  - ${rule}`);
  const port = await freePort();
  await writeFile(
    config,
    [
      "allowlist:",
      ...rules,
      "jail_type: landjail",
      `proxy_port: ${port}`,
      `log_dir: ${path.join(dir, "logs")}`,
      "",
    ].join("\n"),
  );
  return { config };
}

/** The agent-firewall module's outputs, as a template passes them to `agent_firewall`. */
export const FIREWALL_OUTPUTS = {
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
export async function underAgentapi(agentapi: number, from: string) {
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
export const gooseOnPath = (ws: Workspace) => path.join(ws.goose.pathDir, "goose");

export const PROXY_URL = /^http:\/\/(127\.0\.0\.1|localhost):\d+$/;

/**
 * A tool call's detached process, as an attacker inside Goose would leave one
 * (issue N1): it waits for a process of this workspace whose arguments
 * hold the words `trigger` in a row (by their base names: ["sha256sum"] is
 * that program, never a shell script that names it), then renames `fake`
 * over `target`, keeping the original as `<target>.orig`, for the fake to
 * put back once it has run. Returns the shell command that starts it
 * detached (setsid), for a `!` message. What it watches for is in a file, so
 * that no command line but the one it waits for holds it.
 */
export async function plantSwapper(
  ws: Workspace,
  opts: { trigger: string[]; target: string; fake: string },
): Promise<string> {
  const dir = await mkdtemp(path.join(ws.home, "swapper-"));
  const settings = path.join(dir, "settings.json");
  await writeFile(settings, JSON.stringify({ ...opts, home: ws.home }));
  const script = path.join(dir, "swapper.cjs");
  await writeFile(
    script,
    `const fs = require("node:fs");
const { trigger, target, fake, home } = JSON.parse(fs.readFileSync(${JSON.stringify(settings)}, "utf8"));
const read = (file) => { try { return fs.readFileSync(file, "utf8").split("\\0"); } catch { return []; } };
const named = (argv) => argv.some((_, i) => trigger.every((word, j) => (argv[i + j] ?? "").split("/").pop() === word));
const deadline = Date.now() + 60000;
(function look() {
  for (const pid of fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name))) {
    if (named(read(\`/proc/\${pid}/cmdline\`)) && read(\`/proc/\${pid}/environ\`).includes(\`HOME=\${home}\`)) {
      fs.renameSync(target, \`\${target}.orig\`);
      fs.renameSync(fake, target);
      return;
    }
  }
  if (Date.now() < deadline) setTimeout(look, 2);
})();
`,
  );
  return `setsid -f '${process.execPath}' '${script}' > /dev/null 2>&1 < /dev/null`;
}

/** The user a workspace of root's containment files runs as: nobody, whom no file here belongs to. */
export const NOBODY = { uid: 65534, gid: 65534 };

const rootDirs: string[] = [];
afterEach(async () => {
  for (const dir of rootDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/**
 * A folder only root can change, in /opt (root's, as are / and every folder
 * of an image's system paths; the checkout may be anywhere, /tmp included),
 * holding a copy of each file, readable and runnable by everyone: what a
 * template's image installs for a workspace user who is not root.
 */
export async function rootOwnedCopies(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp("/opt/goose-module-test-");
  rootDirs.push(dir);
  await chmod(dir, 0o755);
  for (const [name, from] of Object.entries(files)) {
    await copyFile(from, path.join(dir, name));
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

// A workspace that ran the registry's coder/goose 3.0.1, started under this
// module, and a new workspace whose template kept 3.0.1's prompt variables on
// coder_agent.env: real AgentAPI and the Goose under test, asserting what
// Goose loaded and received from its own database.

import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  DESKTOP_COMMANDER,
  gooseSessionExtensionConfigs,
  predecessorConfigYaml,
  predecessorHints,
  README_SYSTEM_PROMPT,
  type Workspace,
  writePredecessorHome,
} from "../../support/workspace/index.js";
import {
  environOf,
  newWorkspace,
  output,
  PLAIN,
  render,
  SESSION,
  start,
  stop,
  theAgentapi,
  waitRestarted,
  waitTurns,
} from "./scenario.js";

const TASK_PROMPT = "Add a health check endpoint to the 'api' service, then run \"npm test\": ünïcødé 🚀";
// In 3.0.1's README's additional_extensions, and still in the template, with a changed field.
const MEMORY_3X = "memory:\n  type: builtin\n  name: memory\n  enabled: true\n  timeout: 300\n";
const MEMORY_NOW = "memory:\n  type: builtin\n  name: memory\n  enabled: true\n  timeout: 600\n";
const TEMPLATE_3X = {
  provider: "anthropic",
  model: "claude-3-5-sonnet-latest",
  additionalExtensions: `${DESKTOP_COMMANDER}${MEMORY_3X}`,
  systemPrompt: README_SYSTEM_PROMPT,
  taskPrompt: TASK_PROMPT,
};
// A line of the system prompt that appears once in it.
const PROMPT_LINE = "Periodically check in on background tasks.";

const lines = (text: string) => text.split("\n").filter((line) => line.startsWith("goose-module: "));
const count = (text: string, part: string) => text.split(part).length - 1;

async function backupsIn(dir: string, name: string): Promise<string[]> {
  return (await readdir(dir))
    .filter((entry) => entry.startsWith(`${name}.coder-goose-3x-`))
    .map((e) => path.join(dir, e));
}

/**
 * What Goose loaded into each of its sessions from its config, by extension
 * name. Goose saves its own platform extensions with every session too
 * (todo, summon, "Extension Manager", …: type "platform",
 * crates/goose/src/agents/platform_extensions/mod.rs, aaif-goose/goose
 * v1.47.0; observed), whatever the config says.
 */
async function loaded(ws: Workspace) {
  return (await gooseSessionExtensionConfigs(ws.gooseDb)).map((saved) =>
    Object.fromEntries(saved.filter((e) => e.type !== "platform").map((extension) => [extension.name, extension])),
  );
}

describe("upgrade from coder/goose 3.0.1", () => {
  it("3.0.1's settings do not win, the system prompt is there once, GOOSE_TASK_PROMPT is delivered once, backups are kept", async () => {
    const ws = await newWorkspace();
    const files = await writePredecessorHome(ws.home, TEMPLATE_3X);
    ws.setAgentEnv({ GOOSE_SYSTEM_PROMPT: README_SYSTEM_PROMPT, GOOSE_TASK_PROMPT: TASK_PROMPT });
    // The admin's upgrade: the system prompt moved to system_prompt (the agent's
    // env still has it), desktop-commander dropped, memory changed, another port.
    expect(ws.port).not.toBe(3284);
    const rendered = await render(ws, {
      ...PLAIN,
      system_prompt: README_SYSTEM_PROMPT,
      additional_extensions: MEMORY_NOW,
    });
    const configDir = path.dirname(files.configFile);

    const first = output(await start(ws, rendered));
    await waitTurns(ws, 1);
    expect(await ws.deliveries(TASK_PROMPT)).toBe(1);
    await ws.send("What changed?");
    await stop(ws, rendered);
    const second = output(await start(ws, rendered));
    await ws.waitStable();

    // What Goose loaded: the module's extensions, none of 3.0.1's.
    const sessions = await loaded(ws);
    expect(sessions).toHaveLength(1);
    const extensions = sessions[0] ?? {};
    // Keyed by each entry's `name`, as Goose saves it: 3.0.1's coder entry and the module's are both "Coder".
    expect(Object.keys(extensions).sort()).toEqual(["Coder", "developer", "memory"]);
    expect(extensions.Coder?.envs?.CODER_MCP_AI_AGENTAPI_URL).toBe(`http://localhost:${ws.port}`);
    expect(extensions.memory?.timeout).toBe(600);
    expect(await ws.sessionsNamed(SESSION)).toHaveLength(1);

    // Delivered once, across the start, the stop and the second start.
    expect(await ws.deliveries(TASK_PROMPT)).toBe(1);
    expect(await ws.deliveries((text) => text.includes("Your task at hand"))).toBe(0);

    const hints = await readFile(path.join(configDir, ".goosehints"), "utf8");
    expect(count(hints, PROMPT_LINE)).toBe(1);

    const [configBackup] = await backupsIn(configDir, "config.yaml");
    const [hintsBackup] = await backupsIn(configDir, ".goosehints");
    expect(await readFile(configBackup as string, "utf8")).toBe(predecessorConfigYaml(TEMPLATE_3X));
    expect(await readFile(hintsBackup as string, "utf8")).toBe(predecessorHints(README_SYSTEM_PROMPT));
    expect(await readFile(files.configFile, "utf8")).toBe(
      "GOOSE_PROVIDER: anthropic\nGOOSE_MODEL: claude-3-5-sonnet-latest\n",
    );
    expect((await readdir(files.moduleFolder)).sort()).toEqual([
      "agentapi-start.log",
      "install.log",
      "install.sh",
      "prompt.txt",
      "scripts",
    ]);

    const moved = (name: string, note: string) =>
      `goose-module: config.yaml: extensions.${name} (written by coder/goose 3.x, ${note}) moved aside to ${configBackup}`;
    const folderLine = `goose-module: ${files.moduleFolder} was left by coder/goose 3.x (its install and start scripts and their logs); nothing reads it any more, so it is safe to delete`;
    expect(lines(first)).toEqual(
      expect.arrayContaining([
        `goose-module: prompt: from GOOSE_TASK_PROMPT in the agent's environment (${TASK_PROMPT.length} characters), as coder/goose 3.x read it; the module's ai_prompt input replaces it`,
        `goose-module: system prompt: from system_prompt (${README_SYSTEM_PROMPT.length} characters)`,
        "goose-module: GOOSE_SYSTEM_PROMPT in the agent's environment is ignored: system_prompt is used. Remove it from coder_agent.env.",
        folderLine,
        moved("coder", `pointed at :3284, not agentapi_port ${ws.port}`),
        moved("developer", "the module's config layer gives Goose this entry now"),
        moved("desktop-commander", "the template no longer lists it"),
        moved("memory", "the module's config layer gives Goose this entry now"),
        "goose-module: config.yaml: kept its GOOSE_PROVIDER and GOOSE_MODEL lines for a goose run in a terminal; the module's Goose takes goose_provider and goose_model from its environment",
        `goose-module: .goosehints: the system prompt coder/goose 3.x wrote there is now the module's block alone, so Goose reads it once; the old file is kept at ${hintsBackup}`,
      ]),
    );
    // The install's line and the start's, in whichever order the two scripts wrote them.
    expect(
      lines(second)
        .filter((line) => line.includes("coder/goose 3.x"))
        .sort(),
    ).toEqual(
      [
        `goose-module: prompt: from GOOSE_TASK_PROMPT in the agent's environment (${TASK_PROMPT.length} characters), as coder/goose 3.x read it; the module's ai_prompt input replaces it`,
        folderLine,
      ].sort(),
    );
    expect(second).not.toContain("warning:");
  });
});

describe("GOOSE_TASK_PROMPT on a new workspace's coder_agent.env", () => {
  it("is delivered once across start, a supervisor's restart, stop and start, and reaches no child's environment", async () => {
    const ws = await newWorkspace();
    ws.setAgentEnv({ GOOSE_TASK_PROMPT: TASK_PROMPT });
    const rendered = await render(ws, PLAIN);
    const first = output(await start(ws, rendered));
    expect(first).toContain(
      `goose-module: prompt: from GOOSE_TASK_PROMPT in the agent's environment (${TASK_PROMPT.length} characters)`,
    );
    await waitTurns(ws, 1);
    const agentapi = await theAgentapi(ws);
    expect((await environOf(agentapi)).has("GOOSE_TASK_PROMPT")).toBe(false);

    process.kill(agentapi, "SIGKILL");
    await waitRestarted(ws, agentapi);
    await ws.send("Carry on.");
    await stop(ws, rendered);
    await start(ws, rendered);
    await ws.waitStable();
    expect(await ws.deliveries(TASK_PROMPT)).toBe(1);
    expect(await ws.sessionsNamed(SESSION)).toHaveLength(1);
  });
});

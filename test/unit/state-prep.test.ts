import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ModulePaths } from "../../src/config.js";
import type { StartDecision } from "../../src/session-decision.js";
import type { LaunchPlan } from "../../src/start-decision.js";
import { prepareState } from "../../src/state-prep.js";
import { scratchFolders } from "./scratch.js";

const fresh = scratchFolders("state-prep-test");

function pathsIn(dir: string): ModulePaths {
  const at = (name: string) => path.join(dir, name);
  return {
    dir,
    logs: at("logs"),
    scripts: at("scripts"),
    bin: at("bin"),
    stateFile: at("agentapi-state.json"),
    stateBackup: at("agentapi-state.json.bak"),
    stateOwner: at("agentapi-state.owner.json"),
    pidFile: at("agentapi.pid"),
    launchRecord: at("agentapi-launch.json"),
    promptFile: at("prompt.txt"),
    supervisorPid: at("supervisor.pid"),
    tmp: at("tmp"),
    gooseLayer: at("goose-config.json"),
  };
}

const setAsideDecision: StartDecision = {
  mode: "cold",
  reason: 'Goose has no session named "task-1"',
  state: "set-aside",
  stateReason:
    "the AgentAPI state file holds 2 message(s) from a conversation this new Goose session will not remember",
};

function plan(restart: boolean): LaunchPlan {
  return {
    sessionName: "task-1",
    probe: { kind: "absent", source: "test" },
    decision: setAsideDecision,
    stateText: null,
    stateSummary: { kind: "valid", messages: 2, userMessages: 1, initialPromptSent: false },
    turn: { action: "none", reason: "cold start" },
    restart,
  };
}

/** A folder holding a chat and five older set-aside chats, the most a start keeps. */
async function folderWithFiveSetAside(): Promise<ModulePaths> {
  const paths = pathsIn(await fresh());
  await writeFile(paths.stateFile, '{"version":1,"messages":[]}');
  for (let day = 1; day <= 5; day++)
    await writeFile(`${paths.stateFile}.set-aside-2026-11-0${day}T10-00-00-000Z`, `chat ${day}`);
  return paths;
}

async function setAsideCopies(paths: ModulePaths): Promise<string[]> {
  return (await readdir(paths.dir)).filter((name) => name.includes(".set-aside-")).sort();
}

describe("prepareState sets a chat aside", () => {
  it("at a workspace start: the oldest copy beyond five goes", async () => {
    const paths = await folderWithFiveSetAside();
    await prepareState(paths, plan(false));
    const copies = await setAsideCopies(paths);
    expect(copies).toHaveLength(5);
    expect(copies).not.toContain("agentapi-state.json.set-aside-2026-11-01T10-00-00-000Z");
  });

  it("at a supervisor's restart: no set-aside chat is ever deleted", async () => {
    const paths = await folderWithFiveSetAside();
    await prepareState(paths, plan(true));
    const copies = await setAsideCopies(paths);
    expect(copies).toHaveLength(6);
    expect(copies).toContain("agentapi-state.json.set-aside-2026-11-01T10-00-00-000Z");
  });
});

import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { StartDecision } from "../../../src/launch/session-decision.js";
import type { LaunchPlan } from "../../../src/launch/start-decision.js";
import { prepareState } from "../../../src/launch/state-prep.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { scratchFolders } from "../scratch.js";

const fresh = scratchFolders("state-prep-test");

function pathsIn(dir: string): ModulePaths {
  const at = (name: string) => path.join(dir, name);
  const [stateFile, pidFile, supervisorPid] = [at("agentapi-state.json"), at("agentapi.pid"), at("supervisor.pid")];
  const more = {
    stateBackup: `${stateFile}.bak`,
    stateOwner: at("agentapi-state.owner.json"),
    tmp: at("tmp"),
    gooseLayer: at("goose-config.json"),
  };
  const rest = { launchRecord: at("agentapi-launch.json"), promptFile: at("prompt.txt"), supervisorPid, ...more };
  return { dir, logs: at("logs"), scripts: at("scripts"), bin: at("bin"), stateFile, pidFile, ...rest };
}

const decision: StartDecision = {
  ...{ mode: "cold", reason: 'Goose has no session named "task-1"', state: "set-aside" },
  stateReason:
    "the AgentAPI state file holds 2 message(s) from a conversation this new Goose session will not remember",
};

const plan = (restart: boolean): LaunchPlan => ({
  ...{ sessionName: "task-1", probe: { kind: "absent", source: "test" }, decision, stateText: null },
  stateSummary: { kind: "valid", messages: 2, userMessages: 1, initialPromptSent: false },
  turn: { action: "none", reason: "cold start" },
  restart,
});

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
  it.each([
    ["at a workspace start: the oldest copy beyond five goes", false, 5, false],
    ["at a supervisor's restart: no set-aside chat is ever deleted", true, 6, true],
  ])("%s", async (_, restart, count, oldestKept) => {
    const paths = await folderWithFiveSetAside();
    await prepareState(paths, plan(restart));
    const copies = await setAsideCopies(paths);
    expect(copies).toHaveLength(count);
    expect(copies.includes("agentapi-state.json.set-aside-2026-11-01T10-00-00-000Z")).toBe(oldestKept);
  });
});

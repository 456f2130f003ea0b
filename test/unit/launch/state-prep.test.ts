import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import type { LaunchPlan } from "../../../src/launch/launch-plan.js";
import type { StartDecision } from "../../../src/launch/session-decision.js";
import { prepareState } from "../../../src/launch/state-prep.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { scratchFolders } from "../scratch.js";

const fresh = scratchFolders("state-prep-test");

/** The paths prepareState reads, as a start lays them out in the module folder. */
function pathsIn(dir: string): ModulePaths {
  const stateFile = path.join(dir, "agentapi-state.json");
  const stateOwner = path.join(dir, "agentapi-state.owner.json");
  return { dir, stateFile, stateBackup: `${stateFile}.bak`, stateOwner } as ModulePaths;
}

const decision: StartDecision = { mode: "cold", reason: "no session", state: "set-aside", stateReason: "2 messages" };

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

it.each([
  ["at a workspace start: the oldest copy beyond five goes", false, 5, false],
  ["at a supervisor's restart: no set-aside chat is ever deleted", true, 6, true],
])("prepareState sets a chat aside %s", async (_, restart, count, oldestKept) => {
  const paths = await folderWithFiveSetAside();
  await prepareState(paths, plan(restart));
  const copies = await setAsideCopies(paths);
  expect(copies).toHaveLength(count);
  expect(copies.includes("agentapi-state.json.set-aside-2026-11-01T10-00-00-000Z")).toBe(oldestKept);
});

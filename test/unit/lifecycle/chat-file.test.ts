import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  chatFiles,
  prepareChat,
  removeStatusLines,
  type SavedChat,
  verifyChatAfterStop,
} from "../../../src/lifecycle/chat-file.js";
import { scratchFolders } from "../scratch.js";

const fresh = scratchFolders("chat-file-test");
const saved: SavedChat = {
  text: null,
  summary: { kind: "valid", messages: 2, userMessages: 1, initialPromptSent: false },
  owner: null,
};
const owner = { session_name: "task-1", session_id: null };

it("names every file beside the chat after the state file, wherever the template puts it (the on-disk contract in docs/architecture.md)", () => {
  const files = chatFiles("/var/lib/goose/chat.json");
  expect([files.backup, files.owner, files.tmp, files.setAside(new Date("2026-11-21T10:00:00.000Z"))]).toEqual([
    "/var/lib/goose/chat.json.bak",
    "/var/lib/goose/chat.json.owner.json",
    "/var/lib/goose/chat.json.tmp",
    "/var/lib/goose/chat.json.set-aside-2026-11-21T10-00-00-000Z",
  ]);
});

// Lines as upstream Goose 1.47.0 draws them under AgentAPI.
const SPINNER = "◐  Sampling syntax streams...  (Ctrl+C to interrupt)";
const CANCELLED = `Reading ci.yml\n${SPINNER}\n^CYes — what would you like me to do?\n  ⏱ 3.1s`;

const at = "2026-11-22T10:00:00.000000001Z";
const [a, u] = [(m: string) => ["agent", m], (m: string) => ["user", m]];
const state = (...messages: string[][]) =>
  JSON.stringify({
    version: 1,
    messages: messages.map(([role, message], id) => ({ id, message, role, time: at })),
    initial_prompt: "p",
    initial_prompt_sent: true,
  });
const texts = (text: string) =>
  JSON.parse(text).messages.map((m: { id: number; message: string }) => `${m.id} ${m.message}`);

describe("removeStatusLines", () => {
  it("removes a trailing spinner-only agent message and keeps everything else as it was", () => {
    const text = state(a("banner"), u("do it"), a(SPINNER));
    const cleaned = removeStatusLines(text);
    expect(cleaned?.changed).toBe(1);
    const before = JSON.parse(text);
    expect(JSON.parse(cleaned!.text)).toEqual({ ...before, messages: before.messages.slice(0, 2) });
  });

  it("renumbers positional ids so the next message cannot collide", () => {
    const cleaned = removeStatusLines(state(a("banner"), a(SPINNER), u("again"), a("reply")));
    expect(texts(cleaned!.text)).toEqual(["0 banner", "1 again", "2 reply"]);
  });

  it("takes the spinner and the echoed ^C out of a cancelled turn's message, keeping Goose's words and the ids", () => {
    const cleaned = removeStatusLines(state(a("banner"), u("do it"), a(CANCELLED)));
    expect(cleaned?.changed).toBe(1);
    expect(texts(cleaned!.text)).toEqual([
      "0 banner",
      "1 do it",
      "2 Reading ci.yml\nYes — what would you like me to do?\n  ⏱ 3.1s",
    ]);
  });

  it.each([
    ["user messages, even ones that look like a spinner", state(u(SPINNER), u(CANCELLED), a("reply"))],
    ["a clean chat", state(a("banner"), u("hi"), a("reply"))],
    ["a file that is not JSON", "{not json"],
    ["a file that is not a state file", "[]"],
  ])("never removes (returns null, writes nothing) from %s", (_name, text) => {
    expect(removeStatusLines(text)).toBeNull();
  });
});

// The chat is cleaned where it is kept: at the stop, and again at the start that restores it (after a crash, no stop ran).
it.each([
  [
    "the start that keeps it, and its backup",
    (stateFile: string, text: string) =>
      prepareChat(stateFile, {
        action: "keep",
        saved: { ...saved, text, summary: { kind: "valid", messages: 4, userMessages: 1, initialPromptSent: true } },
        owner,
        restart: false,
      }),
  ],
  [
    "the stop",
    (stateFile: string) => verifyChatAfterStop({ stateFile, backupFile: null, persistence: true, wasRunning: true }),
  ],
])("the saved chat shows no status lines after %s", async (_name, step) => {
  const dir = await fresh();
  const stateFile = path.join(dir, "agentapi-state.json");
  const text = state(a("banner"), u("do it"), a(CANCELLED), a(SPINNER));
  await writeFile(stateFile, text);
  await step(stateFile, text);
  const files = [stateFile, ...(await readdir(dir)).filter((f) => f.endsWith(".bak")).map((f) => path.join(dir, f))];
  for (const file of files)
    expect(texts(await readFile(file, "utf8"))).toEqual([
      "0 banner",
      "1 do it",
      "2 Reading ci.yml\nYes — what would you like me to do?\n  ⏱ 3.1s",
    ]);
});

/** A folder holding a chat and five older set-aside chats, the most a start keeps. */
async function folderWithFiveSetAside(): Promise<{ dir: string; stateFile: string }> {
  const dir = await fresh();
  const paths = { dir, stateFile: path.join(dir, "agentapi-state.json") };
  await writeFile(paths.stateFile, '{"version":1,"messages":[]}');
  for (let day = 1; day <= 5; day++)
    await writeFile(`${paths.stateFile}.set-aside-2026-11-0${day}T10-00-00-000Z`, `chat ${day}`);
  return paths;
}

async function setAsideCopies(paths: { dir: string }): Promise<string[]> {
  return (await readdir(paths.dir)).filter((name) => name.includes(".set-aside-")).sort();
}

it.each([
  ["at a workspace start: the oldest copy beyond five goes", false, 5, false],
  ["at a supervisor's restart: no set-aside chat is ever deleted", true, 6, true],
])("prepareChat sets a chat aside %s", async (_, restart, count, oldestKept) => {
  const paths = await folderWithFiveSetAside();
  await prepareChat(paths.stateFile, { action: "set-aside", why: "2 messages", saved, owner, restart });
  const copies = await setAsideCopies(paths);
  expect(copies).toHaveLength(count);
  expect(copies.includes("agentapi-state.json.set-aside-2026-11-01T10-00-00-000Z")).toBe(oldestKept);
});

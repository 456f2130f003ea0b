import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ListedSession } from "../../../src/goose/session-records.js";
import { PREDECESSOR_DIR, predecessorRan } from "../../../src/predecessor/config-files.js";
import { describeEarlierConversation, findEarlierConversation } from "../../../src/predecessor/earlier-conversation.js";
import { scratchDir } from "../scratch.js";

const at = scratchDir("predecessor-test");

describe("predecessorRan: ~/.goose-module as coder/goose 3.x left it", () => {
  let n = 0;
  async function home(make: (dir: string) => Promise<unknown>): Promise<string> {
    const h = at(`home-${n++}`);
    await mkdir(h, { recursive: true });
    await make(path.join(h, PREDECESSOR_DIR));
    return h;
  }
  const withScript = async (dir: string) => {
    await mkdir(path.join(dir, "scripts"), { recursive: true });
    await writeFile(path.join(dir, "scripts", "agentapi-start.sh"), "#!/bin/bash\n");
  };
  it.each([
    ["the folder with scripts/agentapi-start.sh", withScript, true],
    ["no folder", async () => {}, false],
    ["the folder without the start script", (dir: string) => mkdir(dir), false],
    [
      "the start script a folder, not a file",
      (dir: string) => mkdir(path.join(dir, "scripts", "agentapi-start.sh"), { recursive: true }),
      false,
    ],
    [
      "~/.goose-module a symlink to such a folder",
      async (dir: string) => {
        const real = `${dir}-real`;
        await withScript(real);
        await symlink(real, dir);
      },
      false,
    ],
    [
      "scripts a symlink",
      async (dir: string) => {
        await withScript(`${dir}-elsewhere`);
        await mkdir(dir);
        await symlink(path.join(`${dir}-elsewhere`, "scripts"), path.join(dir, "scripts"));
      },
      false,
    ],
  ])("%s -> %s", async (_name, make, want) => {
    expect(await predecessorRan(await home(make))).toBe(want);
  });
});

describe("findEarlierConversation: the newest 3.x conversation in the folder", () => {
  const FOLDER = "/home/coder/project";
  const s = (id: string, more: Partial<Record<keyof ListedSession, unknown>> = {}): ListedSession => ({
    id,
    name: "CLI Session",
    user_set_name: false,
    session_type: "user",
    working_dir: FOLDER,
    message_count: 2,
    updated_at: `2026-11-20T${id.slice(-2)}:00:00Z`,
    ...more,
  });
  it.each([
    ["the newest of two", [s("a_09"), s("b_11")], "b_11"],
    ["by last message, not updated_at", [s("a_09", { last_message_at: "2026-11-21T00:00:00Z" }), s("b_11")], "a_09"],
    ["a name Goose generated counts", [s("a_09", { name: "Fix the login test" })], "a_09"],
    ["not an empty session", [s("a_09"), s("b_11", { message_count: 0 })], "a_09"],
    ["not a session whose name the user set", [s("a_09"), s("b_11", { user_set_name: true })], "a_09"],
    ["not another folder", [s("a_09"), s("b_11", { working_dir: "/home/coder" })], "a_09"],
    ["not a scheduled or sub-agent session", [s("a_09"), s("b_11", { session_type: "scheduled" })], "a_09"],
    ["none", [s("b_11", { message_count: 0 })], null],
  ] as const)("%s", (_name, sessions, want) => {
    expect(findEarlierConversation([...sessions], FOLDER)?.id ?? null).toBe(want);
  });

  it("names it with its id, name, messages and time, and says how to open it", () => {
    const earlier = findEarlierConversation([s("20261120_07", { message_count: 4 })], FOLDER);
    expect(earlier).toEqual({
      id: "20261120_07",
      name: "CLI Session",
      messages: 4,
      lastActive: "2026-11-20T07:00:00Z",
    });
    const line = describeEarlierConversation(earlier!, "coder-ws");
    expect(line).toContain('Goose session 20261120_07 "CLI Session" (4 message(s), last active 2026-11-20T07:00:00Z)');
    expect(line).toMatch(/does not resume it as "coder-ws"/);
    expect(line.endsWith("to open it in a terminal: goose session --resume --session-id 20261120_07")).toBe(true);
  });
});

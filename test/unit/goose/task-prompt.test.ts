import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writePromptFile } from "../../../src/goose/task-prompt.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "task-prompt-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("writePromptFile", () => {
  it("gives a new session the prompt as a private file", async () => {
    const file = path.join(await mkdtemp(path.join(dir, "cold-")), "task-prompt.md");
    expect(await writePromptFile(file, "Fix the failing test.\n", "cold")).toBe(file);
    expect(await readFile(file, "utf8")).toBe("Fix the failing test.\n");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it.each([
    {
      name: "a resumed session, which already holds the prompt",
      prompt: "Fix the failing test.",
      mode: "warm" as const,
    },
    { name: "an empty prompt", prompt: "", mode: "cold" as const },
    { name: "a prompt of blanks", prompt: " \n\t", mode: "cold" as const },
  ])("writes nothing for $name", async ({ prompt, mode }) => {
    const folder = await mkdtemp(path.join(dir, "none-"));
    expect(await writePromptFile(path.join(folder, "task-prompt.md"), prompt, mode)).toBeNull();
    expect(await readdir(folder)).toEqual([]);
  });
});

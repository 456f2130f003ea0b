import { readdir } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { writePromptFile } from "../../../src/goose/task-prompt.js";
import { modeOf, readText, scratchFolders } from "../scratch.js";

const fresh = scratchFolders("task-prompt-test");

it("gives a new session the prompt as a private file", async () => {
  const file = path.join(await fresh(), "task-prompt.md");
  expect(await writePromptFile(file, "Fix the failing test.\n", "cold")).toBe(file);
  expect(await readText(file)).toBe("Fix the failing test.\n");
  expect(await modeOf(file)).toBe(0o600);
});

it.each([
  ["a resumed session, which already holds the prompt", "Fix the failing test.", "warm"],
  ["an empty prompt", "", "cold"],
  ["a prompt of blanks", " \n\t", "cold"],
] as const)("writes nothing for %s", async (_, prompt, mode) => {
  const folder = await fresh();
  expect(await writePromptFile(path.join(folder, "task-prompt.md"), prompt, mode)).toBeNull();
  expect(await readdir(folder)).toEqual([]);
});

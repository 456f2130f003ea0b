import { expect, it } from "vitest";
import { mayTypeExit } from "../../../src/goose/mode.js";
import type { GooseMode } from "../../../src/settings/config.js";

it.each<[GooseMode, boolean]>([
  // Nothing in Goose asks before a tool call: Enter can only reach the prompt.
  ["auto", true],
  ["chat", true],
  // Enter could answer a pending approval menu with its first choice, Allow.
  ["smart_approve", false],
  ["approve", false],
])("mayTypeExit %s: %s", (mode, typed) => {
  expect(mayTypeExit(mode)).toBe(typed);
});

import { describe, expect, it } from "vitest";
import { type GooseMode, mayTypeExit } from "../../../src/goose/mode.js";

describe("mayTypeExit", () => {
  it.each<[GooseMode, boolean]>([
    // Nothing in Goose asks before a tool call: Enter can only reach the prompt.
    ["auto", true],
    ["chat", true],
    // Enter could answer a pending approval menu with its first choice, Allow.
    ["smart_approve", false],
    ["approve", false],
  ])("%s: %s", (mode, typed) => {
    expect(mayTypeExit(mode)).toBe(typed);
  });
});

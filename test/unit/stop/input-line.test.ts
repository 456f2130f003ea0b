import { describe, expect, it } from "vitest";
import { agentPhase, inputLine } from "../../../src/stop/agent-stop.js";

// Screens as AgentAPI's /internal/screen gave them for a real Goose 1.46.1.
const REPLY = "ack 1: Fix the flaky test in ci.yml.\n  ╌╌╌╌╌╌╌╌╌╌ 1% 1k/128k\n";

describe("inputLine: what the last line of Goose's screen says about its input line", () => {
  it.each([
    ["the placeholder hint", `${REPLY}> Enter to send · Ctrl+J newline · Shift+Tab reasoning (off)`, "empty"],
    [
      "after one Ctrl+C on an empty line",
      `${REPLY}> Press Ctrl+C again to exit, or type new instructions to continue`,
      "empty",
    ],
    ["after a cancelled turn", `${REPLY}> Interrupted, what should goose work on instead?`, "empty"],
    // No hint: the line holds what does not show, a newline typed with Ctrl+J (Goose 1.46.1 drew ">" alone).
    ["a bare prompt", `${REPLY}> `, "text"],
    ["a bare prompt, then the newline's empty row", `${REPLY}>\n   \n`, "text"],
    ["text left unsent from before the reply", `${REPLY}> Run the test suite.                 `, "text"],
    ["text that starts like no hint", `${REPLY}> Enter the folder`, "text"],
    [
      "the steer line of a running turn",
      `◐  Sampling...  (Ctrl+C to interrupt)\n>   [Enter steer · Tab queue · Ctrl+C stop]`,
      "none",
    ],
    [
      "the banner, before the first turn's reply",
      "    __( O)>  ● new session · openai gpt-4o\n     L L     goose is ready\n",
      "none",
    ],
    ["a quoted line inside a reply", `${REPLY}>quoted`, "none"],
    ["nothing at all", "  \n\n", "none"],
  ])("%s", (_name, shown, expected) => {
    expect(inputLine(shown)).toBe(expected);
  });
});

describe("agentPhase: whether Goose works on a turn, from AgentAPI's status and Goose's screen", () => {
  const PROMPT = `${REPLY}> Enter to send · Ctrl+J newline · Shift+Tab reasoning (off)`;
  const BANNER = "    __( O)>  ● new session · openai gpt-4o\n     L L     goose is ready\n";
  it.each([
    ["no status", null, null, "no-status"],
    ["running (a spinner is drawn)", "running", null, "turn"],
    ["stable at the prompt", "stable", PROMPT, "idle"],
    ["stable at the banner (the task prompt's turn)", "stable", BANNER, "turn"],
    ["stable, and AgentAPI has no screen stream", "stable", "absent", "idle"],
    // A screen read that timed out (a loaded machine, or a step's last milliseconds as its bound) is not a prompt.
    ["stable, and the screen did not come in time", "stable", null, "no-screen"],
  ] as const)("%s", (_name, status, shown, expected) => {
    expect(agentPhase(status, shown)).toBe(expected);
  });
});

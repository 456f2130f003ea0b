import { describe, expect, it } from "vitest";
import { agentPhase, firstTurn, inputLine, isStatusOnly } from "../../../src/goose/screen.js";

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

// Screens of `goose run --interactive -i FILE` as AgentAPI's /internal/screen
// gave them for Goose 1.46.1 (/work/shared/reference/goose-observed.md): the
// banner, then the turn's reply, the context bar and the prompt.
const FIRST_BANNER =
  "    __( O)>  ● new session · openai gpt-4o\n   \\____)    20261122_1 · /home/coder/project\n     L L     goose is ready\n";
const ECHO = "^[[200~Run the test suite.^[[201~\n\n";
const FIRST_REPLY = "ack 1: Fix the flaky test in ci.yml.\n  ━╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌ 1% 1k/128k\n";

describe("firstTurn: what Goose's screen says of the turn it was launched with", () => {
  it.each([
    ["the banner only: answering", FIRST_BANNER, "running"],
    ["a message echoed by the terminal meanwhile: answering", `${FIRST_BANNER}${ECHO}`, "running"],
    [
      "answered, the placeholder in the input line",
      `${FIRST_BANNER}${FIRST_REPLY}> Enter to send · Ctrl+J newline`,
      "empty",
    ],
    ["answered, a message left unsent", `${FIRST_BANNER}${ECHO}${FIRST_REPLY}> Run the test suite.`, "text"],
    [
      "answered, a long message wrapped over two lines",
      `${FIRST_BANNER}${FIRST_REPLY}> ${"x".repeat(78)}\nyyy`,
      "text",
    ],
    [
      "a later turn's steer line below the bar",
      `${FIRST_BANNER}${FIRST_REPLY}> hi\n\n◐  Thinking...\n>   [Enter steer · Tab queue · Ctrl+C stop]`,
      "running",
    ],
    ["a reply line that only looks like a bar", `${FIRST_BANNER}50% 1/2 done\n`, "running"],
  ])("%s", (_name, shown, expected) => {
    expect(firstTurn(shown)).toBe(expected);
  });
});

// Lines as a real Goose 1.46.1 drew them under AgentAPI.
const SPINNER = "◐  Sampling syntax streams...  (Ctrl+C to interrupt)";
const STEER = ">   [Enter steer · Tab queue · Ctrl+C stop]";
const BAR = "  ╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌ 0% 15/128k";
const PROMPT = "> Enter to send · Ctrl+J newline · Shift+Tab reasoning (off)";

describe("isStatusOnly: whether an agent message shows only Goose's status lines", () => {
  it.each([
    [SPINNER, true],
    [`${SPINNER}\n${STEER}\n`, true],
    [`  ⏱ 0.48s\n${BAR}\n${PROMPT}`, true],
    ["◒  starting 8 extensions: developer, apps", true],
    ["", true],
    ["ack 1: fixed the test\n  ⏱ 0.48s", false],
    [`Here is the plan.\n${SPINNER}`, false],
    ["> quoted reply text", false],
  ])("isStatusOnly %j -> %s", (text, expected) => {
    expect(isStatusOnly(text)).toBe(expected);
  });
});

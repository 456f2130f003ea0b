import { describe, expect, it } from "vitest";
import { firstTurn } from "../../../src/launch/first-turn.js";

// Screens of `goose run --interactive -i FILE` as AgentAPI's /internal/screen
// gave them for Goose 1.46.1 (/work/shared/reference/goose-observed.md): the
// banner, then the turn's reply, the context bar and the prompt.
const BANNER =
  "    __( O)>  ● new session · openai gpt-4o\n   \\____)    20261122_1 · /home/coder/project\n     L L     goose is ready\n";
const ECHO = "^[[200~Run the test suite.^[[201~\n\n";
const REPLY = "ack 1: Fix the flaky test in ci.yml.\n  ━╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌ 1% 1k/128k\n";

describe("firstTurn: what Goose's screen says of the turn it was launched with", () => {
  it.each([
    ["the banner only: answering", BANNER, "running"],
    ["a message echoed by the terminal meanwhile: answering", `${BANNER}${ECHO}`, "running"],
    ["answered, the placeholder in the input line", `${BANNER}${REPLY}> Enter to send · Ctrl+J newline`, "empty"],
    ["answered, a message left unsent", `${BANNER}${ECHO}${REPLY}> Run the test suite.`, "text"],
    ["answered, a long message wrapped over two lines", `${BANNER}${REPLY}> ${"x".repeat(78)}\nyyy`, "text"],
    [
      "a later turn's steer line below the bar",
      `${BANNER}${REPLY}> hi\n\n◐  Thinking...\n>   [Enter steer · Tab queue · Ctrl+C stop]`,
      "running",
    ],
    ["a reply line that only looks like a bar", `${BANNER}50% 1/2 done\n`, "running"],
  ])("%s", (_name, shown, expected) => {
    expect(firstTurn(shown)).toBe(expected);
  });
});

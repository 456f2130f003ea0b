import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentPhase,
  failedExtensions,
  firstTurn,
  inputLine,
  isContextBar,
  withoutStatus,
} from "../../../src/goose/screen.js";

// Screens as AgentAPI's /internal/screen gives them for upstream Goose 1.47.0
// (its lines: test/goose-facts/1.47.0.json).
const BAR = "  ╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌ 0% 15/128k";
const PROMPT = "> Enter to send · Ctrl+J newline";
const SPINNER = "◐  Sampling syntax streams...  (Ctrl+C to interrupt)";
const REPLY = `ack 1: Fix the flaky test in ci.yml.\n${BAR}\n`;
const BANNER = "    __( O)>  ● new session · openai gpt-4o\n     L L     goose is ready\n";

describe("inputLine: what the last line of Goose's screen says about its input line", () => {
  it.each([
    ["the placeholder hint", `${REPLY}${PROMPT}`, "empty"],
    [
      "after one Ctrl+C on an empty line",
      `${REPLY}> Press Ctrl+C again to exit, or type new instructions to continue`,
      "empty",
    ],
    ["after a cancelled turn", `${REPLY}> Interrupted, what should goose work on instead?`, "empty"],
    // No hint: the line holds what does not show, a newline typed with Ctrl+J.
    ["a bare prompt", `${REPLY}> `, "text"],
    ["a bare prompt, then the newline's empty row", `${REPLY}>\n   \n`, "text"],
    ["text left unsent from before the reply", `${REPLY}> Run the test suite.                 `, "text"],
    ["text that starts like no hint", `${REPLY}> Enter the folder`, "text"],
    ["a typed turn running: its spinner last", `${REPLY}> hi\n\n${SPINNER}`, "none"],
    ["a typed turn running, text echoed after its spinner", `${REPLY}> hi\n\n${SPINNER}> not a prompt`, "none"],
    ["the banner, before the first turn's reply", BANNER, "none"],
    ["a quoted line inside a reply", `${REPLY}>quoted`, "none"],
    ["nothing at all", "  \n\n", "none"],
  ])("%s", (_name, shown, expected) => {
    expect(inputLine(shown)).toBe(expected);
  });
});

describe("agentPhase: whether Goose works on a turn, from AgentAPI's status and Goose's screen", () => {
  it.each([
    ["no status", null, null, "no-status"],
    ["running (a spinner is drawn)", "running", null, "turn"],
    ["stable at the prompt", "stable", `${REPLY}${PROMPT}`, "idle"],
    ["stable at the banner (the task prompt's turn)", "stable", BANNER, "turn"],
    ["stable, and AgentAPI has no screen stream", "stable", "absent", "idle"],
    // A screen read that timed out (a loaded machine, or a step's last milliseconds as its bound) is not a prompt.
    ["stable, and the screen did not come in time", "stable", null, "no-screen"],
  ] as const)("%s", (_name, status, shown, expected) => {
    expect(agentPhase(status, shown)).toBe(expected);
  });
});

// Screens of `goose run --interactive -i FILE`: the banner, then the turn's
// reply, the context bar and the prompt. A message AgentAPI typed meanwhile is
// echoed by the terminal, its Enter kept as a newline in the input line.
const FIRST_BANNER =
  "    __( O)>  ● new session · openai gpt-4o\n   \\____)    20261122_1 · /home/coder/project\n     L L     goose is ready\n";
const ECHO = "^[[200~Run the test suite.^[[201~\n\n";
const FIRST_REPLY = "ack 1: Fix the flaky test in ci.yml.\n  ━╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌ 1% 1k/128k\n";

describe("firstTurn: what Goose's screen says of the turn it was launched with", () => {
  it.each([
    ["the banner only: answering", FIRST_BANNER, "running"],
    ["a message echoed by the terminal meanwhile: answering", `${FIRST_BANNER}${ECHO}`, "running"],
    ["answered, the placeholder in the input line", `${FIRST_BANNER}${FIRST_REPLY}${PROMPT}`, "empty"],
    ["answered, a message left unsent", `${FIRST_BANNER}${ECHO}${FIRST_REPLY}> Run the test suite.`, "text"],
    [
      "answered, a message left unsent with its Enter as a newline",
      `${FIRST_BANNER}${ECHO}${FIRST_REPLY}> Run the test suite.\n\n`,
      "text",
    ],
    [
      "answered, a long message wrapped over two lines",
      `${FIRST_BANNER}${FIRST_REPLY}> ${"x".repeat(78)}\nyyy`,
      "text",
    ],
    ["a later turn below the bar: its spinner", `${FIRST_BANNER}${FIRST_REPLY}> hi\n\n${SPINNER}`, "running"],
    [
      "a later turn below the bar: its output, the spinner gone",
      `${FIRST_BANNER}${FIRST_REPLY}> hi\n\nHere is the plan:\n1. read ci.yml`,
      "running",
    ],
    ["a reply line that only looks like a bar", `${FIRST_BANNER}50% 1/2 done\n`, "running"],
  ])("%s", (_name, shown, expected) => {
    expect(firstTurn(shown)).toBe(expected);
  });
});

const CANCELLED = "^CYes — what would you like me to do?";

describe("withoutStatus: an agent message without Goose's status lines", () => {
  it.each<[string, string, string | null]>([
    ["the spinner alone", SPINNER, null],
    ["the reply's time, the bar and the prompt", `  ⏱ 0.48s\n${BAR}\n${PROMPT}`, null],
    ["the Ctrl+C hint as AgentAPI keeps it", "Press Ctrl+C again to exit, or type new instructions to continue", null],
    ["the spinner while extensions load", "◒  starting 8 extensions: developer, apps", null],
    [
      "1.5x's extension lines around the banner",
      `  ⏳ loading extensions in background...\n${BANNER}  ⏳ waiting for extensions to finish loading...\n  ✓ extensions ready`,
      BANNER.trimEnd(),
    ],
    ["nothing", "", null],
    ["a reply", "ack 1: fixed the test\n  ⏱ 0.48s", "ack 1: fixed the test\n  ⏱ 0.48s"],
    ["a reply, then the spinner left by a stop", `Here is the plan.\n\n${SPINNER}`, "Here is the plan."],
    [
      "a cancelled turn: the spinner, then the echoed ^C before Goose's answer",
      `Reading ci.yml\n${SPINNER}\n${CANCELLED}\n  ⏱ 3.1s`,
      "Reading ci.yml\nYes — what would you like me to do?\n  ⏱ 3.1s",
    ],
    ["a ^C typed twice", `^C${CANCELLED}`, "Yes — what would you like me to do?"],
    [
      "spinner lines left where echoed text broke the redraw",
      `one\n${SPINNER}hello\n◓  Sampling syntax streams...  (Ctrl+C to interrupt)\ntwo`,
      "one\ntwo",
    ],
  ])("%s", (_name, text, expected) => {
    expect(withoutStatus(text)).toBe(expected);
  });

  // Lines a reply can hold, near the status lines but not theirs: kept as they are.
  it.each([
    "◐ half done, ◑ waiting",
    "  ◐  an indented moon",
    "> Enter the folder first",
    "Goose prints ⏳ loading extensions in background... at its start",
    "✓ extensions ready to ship",
    "^C",
    "Press ^C to stop the server",
    "^CTraceback (most recent call last):",
    "Yes — what would you like me to do?",
    "⏱ 3 minutes",
    "50% 1/2 done",
  ])("keeps %j", (line) => {
    const text = `Here is what I saw:\n${line}\nDone.`;
    expect(withoutStatus(text)).toBe(text);
  });
});

describe("failedExtensions: the extensions Goose's screen says it went on without", () => {
  const warning = (name: string, reason: string) =>
    `Warning: Failed to start extension '${name}' (${reason}), continuing without it`;
  /** `line` broken into rows of AgentAPI's 80 columns. */
  const wrapped = (line: string) => line.match(/.{1,80}/gu)?.join("\n") ?? "";
  const hint = (name: string) => `  Hint: once the session starts, ask goose to help debug the '${name}' extension`;
  it.each<[string, string, Array<{ name: string; reason: string }>]>([
    ["none", `${BANNER}${PROMPT}`, []],
    [
      "one, 1.47's form, on one row",
      `${warning("todo", "timeout")}\n${hint("todo")}\n${BANNER}`,
      [{ name: "todo", reason: "timeout" }],
    ],
    [
      "two, wrapped at 80 columns, reasons with parentheses",
      `${wrapped(warning("github", "Failed to start the MCP server: No such file or directory (os error 2)"))}\n${hint("github")}\n${wrapped(warning("my server", "Transport closed (exit code 1)"))}\n${hint("my server")}\n${BANNER}`,
      [
        { name: "github", reason: "Failed to start the MCP server: No such file or directory (os error 2)" },
        { name: "my server", reason: "Transport closed (exit code 1)" },
      ],
    ],
    [
      "1.5x's form, after the banner",
      `${BANNER}  ⚠ Failed to start extension 'jira' (HTTP 401), continuing without it\n    Hint: ask goose to help debug the 'jira' extension\n${PROMPT}`,
      [{ name: "jira", reason: "HTTP 401" }],
    ],
    ["a reply that quotes the line's start", `${REPLY}Failed to start extension 'x' (y), so I fixed it`, []],
    ["a line cut off before its end", `${BANNER}Warning: Failed to start extension 'x' (y`, []],
  ])("%s", (_name, shown, expected) => {
    expect(failedExtensions(shown)).toEqual(expected);
  });
});

// Every facts file's screen lines (test/goose-facts/<version>.json) read as
// that Goose draws them: a new release is checked by adding its file.
const FACTS = path.join(import.meta.dirname, "../../goose-facts");
const releases = readdirSync(FACTS)
  .filter((file) => file.endsWith(".json"))
  .map((file) => JSON.parse(readFileSync(path.join(FACTS, file), "utf8")) as { version: string; screen: Screen });

interface Screen {
  prompt_empty: string;
  ctrl_c_again: string;
  interrupted: string;
  spinner: string;
  context_bar: string;
  reply_time: string;
  extension_lines: string[];
  failed_extension: string;
}

describe.each(releases)("Goose $version's screen lines (test/goose-facts)", ({ screen }) => {
  it("its prompts: empty input lines", () => {
    const prompts = [screen.prompt_empty, `> ${screen.ctrl_c_again}`, `> ${screen.interrupted}`];
    expect(prompts.map((prompt) => inputLine(`${REPLY}${prompt}`))).toEqual(["empty", "empty", "empty"]);
  });

  it("its context bar", () => {
    expect(isContextBar(screen.context_bar)).toBe(true);
    expect(firstTurn(`${FIRST_BANNER}ack\n${screen.context_bar}\n${screen.prompt_empty}`)).toBe("empty");
  });

  it("its status lines, alone or among Goose's words", () => {
    const status = [screen.spinner, ...screen.extension_lines, screen.reply_time, screen.context_bar];
    expect(withoutStatus(status.join("\n"))).toBeNull();
    const passing = [screen.spinner, ...screen.extension_lines];
    expect(withoutStatus(["before", ...passing, "after"].join("\n"))).toBe("before\nafter");
  });

  it("its failed extension", () => {
    expect(failedExtensions(`${screen.failed_extension}\n${BANNER}`)).toEqual([{ name: "NAME", reason: "REASON" }]);
  });
});

import { describe, expect, it } from "vitest";
import { type PromptInputs, resolvePrompts, takePromptEnv } from "../../../src/predecessor/prompt-env.js";

const none: PromptInputs = {
  prompt: "",
  systemPrompt: "",
  taskId: "",
  envTaskPrompt: undefined,
  envSystemPrompt: undefined,
};
const TASK = "0b7e5c1a-6d2f-4f3e-9a8b-7c6d5e4f3a2b";
const hostile = "Fix 'it' \"now\"; $(rm -rf ~) `id`\nsecond line ünïcødé 🚀";

describe("resolvePrompts", () => {
  it.each([
    ["no prompt anywhere", {}, "", []],
    ["the task's prompt", { prompt: "Fix it.", taskId: TASK }, "Fix it.", ["prompt: from the task (7 characters)"]],
    ["ai_prompt (no task id)", { prompt: "Fix it." }, "Fix it.", ["prompt: from ai_prompt (7 characters)"]],
    [
      "GOOSE_TASK_PROMPT when the module has none",
      { envTaskPrompt: hostile },
      hostile,
      [
        `prompt: from GOOSE_TASK_PROMPT in the agent's environment (${hostile.length} characters), as coder/goose 3.x read it; the module's ai_prompt input replaces it`,
      ],
    ],
    [
      "the task's prompt over GOOSE_TASK_PROMPT",
      { prompt: "Fix it.", taskId: TASK, envTaskPrompt: "old" },
      "Fix it.",
      [
        "prompt: from the task (7 characters)",
        "GOOSE_TASK_PROMPT in the agent's environment is ignored: the task's prompt is used. Remove it from coder_agent.env.",
      ],
    ],
    [
      "ai_prompt over GOOSE_TASK_PROMPT",
      { prompt: "Fix it.", envTaskPrompt: "old" },
      "Fix it.",
      [
        "prompt: from ai_prompt (7 characters)",
        "GOOSE_TASK_PROMPT in the agent's environment is ignored: ai_prompt is used. Remove it from coder_agent.env.",
      ],
    ],
    ["a blank GOOSE_TASK_PROMPT (a coder_parameter left empty)", { envTaskPrompt: " \n\t" }, "", []],
    [
      "an empty GOOSE_TASK_PROMPT beside ai_prompt",
      { prompt: "Fix it.", envTaskPrompt: "" },
      "Fix it.",
      ["prompt: from ai_prompt (7 characters)"],
    ],
  ] as const)("prompt: %s", (_, given, prompt, lines) => {
    const out = resolvePrompts({ ...none, ...given });
    expect(out.prompt).toBe(prompt);
    expect(out.lines).toEqual(lines);
  });

  it.each([
    ["system_prompt", { systemPrompt: "Be brief." }, "Be brief.", ["system prompt: from system_prompt (9 characters)"]],
    [
      "GOOSE_SYSTEM_PROMPT when system_prompt is empty",
      { envSystemPrompt: "Be brief.\n" },
      "Be brief.\n",
      [
        "system prompt: from GOOSE_SYSTEM_PROMPT in the agent's environment (10 characters), as coder/goose 3.x read it; the module's system_prompt input replaces it",
      ],
    ],
    [
      "system_prompt over GOOSE_SYSTEM_PROMPT",
      { systemPrompt: "Be brief.", envSystemPrompt: "Old." },
      "Be brief.",
      [
        "system prompt: from system_prompt (9 characters)",
        "GOOSE_SYSTEM_PROMPT in the agent's environment is ignored: system_prompt is used. Remove it from coder_agent.env.",
      ],
    ],
    ["a blank GOOSE_SYSTEM_PROMPT", { envSystemPrompt: "\n" }, "", []],
  ] as const)("system prompt: %s", (_, given, systemPrompt, lines) => {
    const out = resolvePrompts({ ...none, ...given });
    expect(out.systemPrompt).toBe(systemPrompt);
    expect(out.prompt).toBe("");
    expect(out.lines).toEqual(lines);
  });
});

it("takePromptEnv reads both variables and leaves neither for a child", () => {
  const env: NodeJS.ProcessEnv = { GOOSE_TASK_PROMPT: "a", GOOSE_SYSTEM_PROMPT: "b", OTHER: "c" };
  expect(takePromptEnv(env)).toEqual({ envTaskPrompt: "a", envSystemPrompt: "b" });
  expect(env).toEqual({ OTHER: "c" });
});

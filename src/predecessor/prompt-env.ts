// Where the start's prompts come from. coder/goose 3.x read both from the
// Coder agent's environment (its README set them on coder_agent.env), which
// the start script inherits; this module's inputs win when they are set.
// registry/coder/modules/goose/{README.md,scripts/install.sh,scripts/start.sh}
// in coder/registry at release/coder/goose/v3.0.1.

import type { StartConfig } from "../settings/config.js";

export const TASK_PROMPT_ENV = "GOOSE_TASK_PROMPT";
export const SYSTEM_PROMPT_ENV = "GOOSE_SYSTEM_PROMPT";

export interface PromptInputs {
  /** goose.prompt from the settings: the task's prompt in a task, else ai_prompt. */
  prompt: string;
  systemPrompt: string;
  /** The Coder task's ID from the layer settings; empty outside a task. */
  taskId: string;
  /** The two variables as the agent's environment held them (undefined when unset). */
  envTaskPrompt: string | undefined;
  envSystemPrompt: string | undefined;
}

export interface ResolvedPrompts {
  prompt: string;
  systemPrompt: string;
  /** One start-log line for each prompt there is and for each variable ignored; none when there is no prompt at all. */
  lines: string[];
}

const given = (text: string | undefined): text is string => text !== undefined && text.trim() !== "";

/**
 * The prompt and system prompt the start uses, and what the log says of them.
 * A blank value counts as unset, as a blank task prompt does
 * (writePromptFile). The variables are taken verbatim: 3.x wrapped the task
 * prompt in its own sentence about goosehints, which belongs to 3.x's system
 * prompt, not to the user's prompt.
 */
export function resolvePrompts(input: PromptInputs): ResolvedPrompts {
  const lines: string[] = [];
  const inputName = input.taskId !== "" ? "the task" : "ai_prompt";
  let prompt = input.prompt;
  if (given(input.prompt)) {
    lines.push(`prompt: from ${inputName} (${input.prompt.length} characters)`);
    if (given(input.envTaskPrompt))
      lines.push(
        `${TASK_PROMPT_ENV} in the agent's environment is ignored: ${inputName === "the task" ? "the task's prompt" : "ai_prompt"} is used. Remove it from coder_agent.env.`,
      );
  } else if (given(input.envTaskPrompt)) {
    prompt = input.envTaskPrompt;
    lines.push(
      `prompt: from ${TASK_PROMPT_ENV} in the agent's environment (${prompt.length} characters), as coder/goose 3.x read it; the module's ai_prompt input replaces it`,
    );
  }
  let systemPrompt = input.systemPrompt;
  if (given(input.systemPrompt)) {
    lines.push(`system prompt: from system_prompt (${input.systemPrompt.length} characters)`);
    if (given(input.envSystemPrompt))
      lines.push(
        `${SYSTEM_PROMPT_ENV} in the agent's environment is ignored: system_prompt is used. Remove it from coder_agent.env.`,
      );
  } else if (given(input.envSystemPrompt)) {
    systemPrompt = input.envSystemPrompt;
    lines.push(
      `system prompt: from ${SYSTEM_PROMPT_ENV} in the agent's environment (${systemPrompt.length} characters), as coder/goose 3.x read it; the module's system_prompt input replaces it`,
    );
  }
  return { prompt, systemPrompt, lines };
}

/**
 * Reads the two variables and removes them from this process's environment,
 * as takeScriptInputs does with the settings: once the start has used
 * them, no child inherits them. Goose hands its environment to every command
 * and extension it runs, and a 3.x-era script there (a copy of 3.x's
 * start.sh, say) would deliver the prompt a second time; a supervisor's
 * restart must never see it either.
 */
export function takePromptEnv(env: NodeJS.ProcessEnv = process.env): {
  envTaskPrompt: string | undefined;
  envSystemPrompt: string | undefined;
} {
  const taken = { envTaskPrompt: env[TASK_PROMPT_ENV], envSystemPrompt: env[SYSTEM_PROMPT_ENV] };
  delete env[TASK_PROMPT_ENV];
  delete env[SYSTEM_PROMPT_ENV];
  return taken;
}

/**
 * The start's config with the prompts it will use, the log lines that say
 * where they came from, and GOOSE_SYSTEM_PROMPT as found (3.x wrote it to
 * .goosehints, which the configure step recognises by it). The variables are
 * taken from this process's environment before any child runs, so none
 * inherits them; the supervisor's restarts get the config without the prompt
 * (supervisor/document.ts).
 */
export function applyPromptSources(parsed: StartConfig): {
  config: StartConfig;
  lines: string[];
  envSystemPrompt: string | undefined;
} {
  const fromEnv = takePromptEnv();
  const { prompt, systemPrompt, lines } = resolvePrompts({ ...parsed.goose, taskId: parsed.taskId, ...fromEnv });
  const config = { ...parsed, goose: { ...parsed.goose, prompt, systemPrompt } };
  return { config, lines, envSystemPrompt: fromEnv.envSystemPrompt };
}

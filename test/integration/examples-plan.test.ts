// `terraform plan -json` of the examples with the newest and the oldest coder
// provider in the mirror, read the way a template author reads plan's output:
// a plain workspace plans without a warning from inside the module (provider
// 2.20 deprecates data "coder_task", which the module no longer reads); a task
// template sees only its own deprecation warnings, and fails when it sets
// ai_prompt beside a task's prompt. Then the templates of coder/goose 3.0.1's
// README (test/templates/goose-3.0.1), also with 3.x's provider minimum 2.12:
// each value 3.x used plans or fails as the README's "Upgrading from 3.x" says,
// every message starts with what to write, and doing what it says plans clean.

import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type PlanDiagnostic, renderModule, resourceValues, tools } from "../../support/workspace/index.js";
import { inModule, plan, show } from "./plan-scenario.js";

const providers = () => [
  ["newest", tools.coderProviderNewest],
  ["oldest", tools.coderProviderOldest],
];

describe.each(providers())("examples planned with the %s coder provider (%s)", (_which, provider) => {
  it("the plain workspace (examples/workspace-template) plans without any warning", async () => {
    const { dir, code, diagnostics } = await plan("workspace-template", provider);
    const listed = diagnostics.map(show).join("\n");
    expect(code, listed).toBe(0);
    expect(diagnostics.filter((d) => inModule(d, dir)).map(show)).toEqual([]);
    // Nothing else either: the plain template reads nothing deprecated.
    expect(diagnostics.map(show)).toEqual([]);
  });

  it("the task template (examples/task-template) shows only its own deprecation warnings", async () => {
    const { dir, code, diagnostics } = await plan("task-template", provider, {
      coderEnv: { CODER_TASK_ID: randomUUID(), CODER_TASK_PROMPT: "Fix the flaky test." },
    });
    const listed = diagnostics.map(show).join("\n");
    expect(code, listed).toBe(0);
    expect(diagnostics.filter((d) => inModule(d, dir)).map(show)).toEqual([]);
    const own = diagnostics.filter((d) => d.file === path.join(dir, "main.tf"));
    expect(own.map(show)).toEqual(diagnostics.map(show));
    for (const d of own) {
      expect(d.severity, listed).toBe("warning");
      expect(d.summary, listed).toMatch(/^Deprecated (Resource|attribute)/);
    }
    // 2.20 deprecates data "coder_task" and resource "coder_ai_task"; 2.13 does not.
    if (provider === tools.coderProviderNewest) expect(own.length, listed).toBeGreaterThan(0);
    else expect(own, listed).toEqual([]);
  });

  it("a task template that sets ai_prompt too fails at plan time in a task with a prompt, saying what to change", async () => {
    const withAiPrompt = (template: string) => {
      const edited = template.replace(/^(\s*)task = data\.coder_task\.me$/m, '$&\n$1ai_prompt = "Write the docs."');
      if (edited === template) throw new Error("examples/task-template has no `task = data.coder_task.me` line");
      return edited;
    };
    const inTask = await plan("task-template", provider, {
      coderEnv: { CODER_TASK_ID: randomUUID(), CODER_TASK_PROMPT: "Fix the flaky test." },
      edit: withAiPrompt,
    });
    expect(inTask.code, inTask.diagnostics.map(show).join("\n")).not.toBe(0);
    const errors = inTask.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => firstSentence(d.detail))).toEqual([
      expect.stringMatching(/^Remove ai_prompt from this task template, or leave it empty in a task\b/),
    ]);
    // The same template outside a task (no task ID): ai_prompt is the prompt, and the plan is clean.
    const plain = await plan("task-template", provider, { edit: withAiPrompt });
    expect(plain.code, plain.diagnostics.map(show).join("\n")).toBe(0);
    expect(plain.diagnostics.filter((d) => d.severity === "error" || inModule(d, plain.dir)).map(show)).toEqual([]);
  });
});

/** A diagnostic's first sentence: what the module says to write. */
const firstSentence = (text: string) => text.replace(/\s+/g, " ").split(/(?<=\.) /)[0];

const TEMPLATES_3X = "test/templates/goose-3.0.1";
/** What plan said, by severity, as each diagnostic's first sentence. */
const said = (diagnostics: PlanDiagnostic[]) => ({
  errors: diagnostics.filter((d) => d.severity === "error").map((d) => firstSentence(d.detail)),
  warnings: diagnostics.filter((d) => d.severity === "warning").map((d) => firstSentence(d.detail)),
});
/** The template with the lines that set `name` in the module block removed. */
const without =
  (...names: string[]) =>
  (template: string) => {
    let edited = template;
    for (const name of names) {
      const next = edited.replace(new RegExp(`^\\s*${name}\\s*=.*\\n`, "m"), "");
      if (next === edited) throw new Error(`the template has no ${name} line`);
      edited = next;
    }
    return edited;
  };
/** The README's "after" for 3.0.1's prompts: from coder_agent.env to ai_prompt and system_prompt. */
function promptsToInputs(template: string): string {
  const system = /^\s*GOOSE_SYSTEM_PROMPT\s*=\s*(<<-EOT\n[\s\S]*?\n\s*EOT)\n/m.exec(template);
  const task = /^\s*GOOSE_TASK_PROMPT\s*=\s*(.*)\n/m.exec(template);
  if (!system || !task) throw new Error("the template sets no GOOSE_SYSTEM_PROMPT or GOOSE_TASK_PROMPT");
  const moved = template.replace(system[0], "").replace(task[0], "");
  const edited = moved.replace(
    /^(\s*goose_model\s*=.*)$/m,
    `$1\n  ai_prompt     = ${task[1]}\n  system_prompt = ${system[1]}`,
  );
  if (edited === moved) throw new Error("the template has no goose_model line");
  return edited;
}

// The fixes, as the first sentence of each message must give them. The versions
// are not copied from main.tf: any release the message names will do.
const REMOVE_GOOSE_VERSION = /^Remove goose_version to use the tested Goose \d+\.\d+\.\d+, or set 1\.34\.0 or newer\.$/;
const REMOVE_ALIAS = (variable: string, value: string, tool: string) =>
  new RegExp(
    `^Remove ${variable} = "${value}": it now means ${tool} v?\\d+\\.\\d+\\.\\d+, the release this module is tested with\\b`,
  );
const REMOVE_OLD_AGENTAPI =
  /^Remove agentapi_version to use the tested AgentAPI v\d+\.\d+\.\d+, or set enable_state_persistence = false\.$/;

describe.each([...providers(), ["3.x's minimum", tools.coderProviderModuleMin]])(
  "coder/goose 3.0.1's README templates planned with the %s coder provider (%s)",
  (_which, provider) => {
    const env = { TF_VAR_anthropic_api_key: "sk-ant-placeholder" };

    it.each([
      ["the usage block", "readme-usage", (t: string) => t],
      ["Run in the background and report tasks", "background-tasks", promptsToInputs],
    ])(
      '%s: goose_version "v1.0.31" fails on its line, agentapi_version "latest" warns; as the README\'s "after" it plans clean',
      async (_title, name, readmeAfter) => {
        const before = await plan(`${TEMPLATES_3X}/${name}`, provider, { coderEnv: env });
        const listed = before.diagnostics.map(show).join("\n");
        expect(before.code, listed).not.toBe(0);
        expect(said(before.diagnostics).errors, listed).toEqual([expect.stringMatching(REMOVE_GOOSE_VERSION)]);
        // The error points at the line to remove, in the template.
        const error = before.diagnostics.find((d) => d.severity === "error");
        const template = await readFile(path.join(before.dir, "main.tf"), "utf8");
        expect(error?.file, listed).toBe(path.join(before.dir, "main.tf"));
        expect(template.split("\n")[(error?.line ?? 0) - 1], listed).toMatch(/^\s*goose_version\s*=\s*"v1\.0\.31"$/);

        // Once the error's line is gone, the plan names the version "latest" now means.
        const aliased = await plan(`${TEMPLATES_3X}/${name}`, provider, {
          coderEnv: env,
          edit: without("goose_version"),
        });
        const aliasedListed = aliased.diagnostics.map(show).join("\n");
        expect(aliased.code, aliasedListed).toBe(0);
        expect(said(aliased.diagnostics), aliasedListed).toEqual({
          errors: [],
          warnings: [expect.stringMatching(REMOVE_ALIAS("agentapi_version", "latest", "AgentAPI"))],
        });

        const after = await plan(`${TEMPLATES_3X}/${name}`, provider, {
          coderEnv: env,
          edit: (t) => readmeAfter(without("goose_version", "agentapi_version")(t)),
        });
        expect(after.code, after.diagnostics.map(show).join("\n")).toBe(0);
        expect(after.diagnostics.map(show)).toEqual([]);
      },
    );

    it("Adding Custom Extensions (MCP): pre_install_script and additional_extensions plan clean", async () => {
      const { code, diagnostics } = await plan(`${TEMPLATES_3X}/custom-extensions`, provider);
      expect(code, diagnostics.map(show).join("\n")).toBe(0);
      expect(diagnostics.map(show)).toEqual([]);
    });

    it('3.x\'s defaults written out (goose_version "stable", agentapi_version "v0.10.0") plan with a warning each, naming the fix', async () => {
      const defaults = (template: string) =>
        without(
          "goose_version",
          "agentapi_version",
        )(template).replace(
          /^(\s*)install_goose(\s*)= true$/m,
          '$&\n$1goose_version$2= "stable"\n$1agentapi_version = "v0.10.0"',
        );
      const { code, diagnostics } = await plan(`${TEMPLATES_3X}/readme-usage`, provider, { edit: defaults });
      const listed = diagnostics.map(show).join("\n");
      expect(code, listed).toBe(0);
      const { errors, warnings } = said(diagnostics);
      expect(errors, listed).toEqual([]);
      expect(warnings, listed).toHaveLength(2);
      expect(warnings, listed).toEqual(
        expect.arrayContaining([
          expect.stringMatching(REMOVE_ALIAS("goose_version", "stable", "Goose")),
          expect.stringMatching(REMOVE_OLD_AGENTAPI),
        ]),
      );
    });

    it("a relative folder fails at plan time, saying to write it absolute", async () => {
      const relative = (template: string) => {
        const edited = template.replace(/^(\s*folder\s*=\s*)"\/home\/coder"$/m, '$1"project"');
        if (edited === template) throw new Error('the template has no folder = "/home/coder" line');
        return edited;
      };
      const { code, diagnostics } = await plan(`${TEMPLATES_3X}/readme-usage`, provider, {
        edit: (t) => relative(without("goose_version", "agentapi_version")(t)),
      });
      const listed = diagnostics.map(show).join("\n");
      expect(code, listed).not.toBe(0);
      expect(said(diagnostics).errors, listed).toEqual([
        expect.stringMatching(/^Set folder to an absolute path on one line, such as "\/home\/coder\/project"\.$/),
      ]);
    });
  },
);

it("the plain workspace (examples/workspace-template) plans without any warning with the module's minimum coder provider", async () => {
  const { code, diagnostics } = await plan("workspace-template", tools.coderProviderModuleMin);
  expect(code, diagnostics.map(show).join("\n")).toBe(0);
  expect(diagnostics.map(show)).toEqual([]);
});

describe("app display names", () => {
  it("web_app_display_name and cli_app_display_name name the apps; the scripts keep Goose's name", async () => {
    const rendered = await renderModule({
      agent_id: "agent-1",
      goose_provider: "anthropic",
      goose_model: "claude-sonnet-4-5",
      cli_app: true,
      web_app_display_name: "Goose chat",
      cli_app_display_name: "Goose terminal",
    });
    const app = (name: string) => resourceValues(rendered, `module.goose.module.agentapi.coder_app.${name}[0]`);
    expect(app("web").display_name).toBe("Goose chat");
    expect(app("cli").display_name).toBe("Goose terminal");
    expect(resourceValues(rendered, "module.goose.module.agentapi.coder_script.start").display_name).toBe(
      "Goose: Start Script",
    );
  });
});

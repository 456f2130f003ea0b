// `terraform plan -json` of the examples with the newest and the oldest coder
// provider in the mirror, read the way a template author reads plan's output:
// a plain workspace plans without a warning from inside the module (provider
// 2.20 deprecates data "coder_task", which the module no longer reads); a task
// template sees only its own deprecation warnings; and a template written for
// the inputs before 5.0.0 stops at plan time with the upgrade in the message.

import { randomUUID } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderModule, resourceValues, tools } from "../../support/workspace/index.js";
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

  it("a task template written for the inputs before 5.0.0 fails at plan time, saying what to change", async () => {
    const old = (template: string) => {
      const edited = template.replace(/^(\s*)task = data\.coder_task\.me$/m, "$1ai_prompt = data.coder_task.me.prompt");
      if (edited === template) throw new Error("examples/task-template has no `task = data.coder_task.me` line");
      return edited;
    };
    // An empty prompt too (a template import, or a plain build of a task template).
    for (const prompt of ["Fix the flaky test.", ""]) {
      const { code, diagnostics } = await plan("task-template", provider, {
        coderEnv: { CODER_TASK_ID: randomUUID(), CODER_TASK_PROMPT: prompt },
        edit: old,
      });
      expect(code, `prompt ${JSON.stringify(prompt)}: ${diagnostics.map(show).join("\n")}`).not.toBe(0);
      const errors = diagnostics.filter((d) => d.severity === "error");
      expect(errors.map((d) => d.detail).join("\n")).toContain("ai_prompt was removed in version 5.0.0");
      expect(errors.map((d) => d.detail).join("\n")).toContain("with `task = data.coder_task.me`");
    }
  });
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
      "Goose (start)",
    );
  });
});

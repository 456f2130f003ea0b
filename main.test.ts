// The registry's TypeScript tests for this module (bun test, with the
// registry's ~test helpers; no Docker). What the scripts do in a workspace is
// tested against real AgentAPI in the module's development repository; here,
// what Terraform makes of the inputs.
import { describe, expect, it } from "bun:test";
import { runTerraformApply, runTerraformInit, type TerraformState, testRequiredVariables } from "~test";

const required = { agent_id: "test-agent", goose_provider: "anthropic", goose_model: "claude-sonnet-4-5" };

/** The rendered coder_scripts, by display name. */
function scripts(state: TerraformState): Record<string, string> {
  const found: Record<string, string> = {};
  for (const resource of state.resources)
    if (resource.type === "coder_script")
      for (const instance of resource.instances) {
        const attributes = instance.attributes as { display_name: string; script: string };
        found[attributes.display_name] = attributes.script;
      }
  return found;
}

describe("goose", async () => {
  await runTerraformInit(import.meta.dir);

  testRequiredVariables(import.meta.dir, required);

  it("runs an install, a start and a stop script, named and ordered as coder-utils does", async () => {
    const state = await runTerraformApply(import.meta.dir, required);
    const byName = scripts(state);
    expect(Object.keys(byName).sort()).toEqual(["Goose: Install Script", "Goose: Start Script", "Goose: Stop Script"]);
    expect(state.outputs.scripts?.value).toEqual(["coder-goose-install_script", "coder-goose-start_script"]);
    // Each announces itself to `coder exp sync` as it ends, the start as wanting the install.
    expect(byName["Goose: Install Script"]).toContain("announce coder-goose-install_script\n");
    expect(byName["Goose: Start Script"]).toContain("announce coder-goose-start_script coder-goose-install_script");
  });

  it("keeps each script within 64 KiB: the agent passes it as one argument, which Linux caps at 128 KiB", async () => {
    const state = await runTerraformApply(import.meta.dir, {
      ...required,
      ai_prompt: "Fix the flaky test. ".repeat(100),
    });
    for (const [name, script] of Object.entries(scripts(state)))
      expect({ name, bytes: Buffer.byteLength(script) <= 64 * 1024 }).toEqual({ name, bytes: true });
  });

  it("never writes a prompt into shell source", async () => {
    const prompt = "$(touch /tmp/pwned) `id` '; exit 1; echo \"";
    const state = await runTerraformApply(import.meta.dir, { ...required, ai_prompt: prompt });
    for (const script of Object.values(scripts(state))) expect(script).not.toContain(prompt);
  });

  it("refuses a relative folder at plan time, saying what to set", async () => {
    try {
      await runTerraformApply(import.meta.dir, { ...required, folder: "project" });
    } catch (error) {
      expect((error as Error).message).toContain("Set folder to an absolute path");
      return;
    }
    throw new Error("a relative folder was accepted");
  });
});

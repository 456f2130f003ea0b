import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { stopBounds, stopBudgetMs } from "../../../src/stop/stop-steps.js";

// The README's promise ("Stop grace period"): with the template's defaults,
// the whole stop fits Kubernetes' default 30 s grace period.
const README_BUDGET_MS = 30_000;

/** A variable's default in variables.tf, in seconds. */
async function defaultSeconds(name: string): Promise<number> {
  const variables = await readFile(new URL("../../../variables.tf", import.meta.url), "utf8");
  const block = new RegExp(`variable "${name}" \\{[^}]*?\\n\\s*default\\s*=\\s*([0-9]+)\\s*\\n`).exec(variables);
  if (!block) throw new Error(`no numeric default for ${name} in variables.tf`);
  return Number(block[1]);
}

describe("the stop's bounds", () => {
  it("with the template's defaults (variables.tf), every step's bound together fits the README's 30 s", async () => {
    const turnMs = (await defaultSeconds("stop_turn_wait_seconds")) * 1000;
    const termMs = (await defaultSeconds("stop_sigterm_wait_seconds")) * 1000;
    expect(stopBudgetMs(stopBounds({ turnMs, termMs }))).toBeLessThanOrEqual(README_BUDGET_MS);
  });

  it("the template's two waits count in full, and every other step has a bound of its own", () => {
    const base = stopBudgetMs(stopBounds({ turnMs: 0, termMs: 0 }));
    expect(stopBudgetMs(stopBounds({ turnMs: 7000, termMs: 11_000 }))).toBe(base + 18_000);
    for (const [step, ms] of Object.entries(stopBounds({ turnMs: 0, termMs: 0 })))
      if (step !== "turn" && step !== "sigterm") expect(ms, step).toBeGreaterThan(0);
  });
});

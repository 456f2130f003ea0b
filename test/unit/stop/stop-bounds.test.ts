import { describe, expect, it } from "vitest";
import { stopBounds, stopBudgetMs } from "../../../src/stop/stop-steps.js";

// The README's promise ("Stop grace period"): with the template's defaults
// (stop_turn_wait_seconds = 5, stop_sigterm_wait_seconds = 10, variables.tf),
// the whole stop fits Kubernetes' default 30 s grace period.
const README_BUDGET_MS = 30_000;

describe("the stop's bounds", () => {
  it("with the template's defaults, every step's bound together fits the README's 30 s", () => {
    expect(stopBudgetMs(stopBounds({ turnMs: 5000, termMs: 10_000 }))).toBeLessThanOrEqual(README_BUDGET_MS);
  });

  it("the template's two waits count in full, and every other step has a bound of its own", () => {
    const base = stopBudgetMs(stopBounds({ turnMs: 0, termMs: 0 }));
    expect(stopBudgetMs(stopBounds({ turnMs: 7000, termMs: 11_000 }))).toBe(base + 18_000);
    for (const [step, ms] of Object.entries(stopBounds({ turnMs: 0, termMs: 0 })))
      if (step !== "turn" && step !== "sigterm") expect(ms, step).toBeGreaterThan(0);
  });
});

// `terraform plan -json` of an example in a scratch copy (removed after the
// file's tests), and the readings of its diagnostics (examples-plan.test.ts).

import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll } from "vitest";
import {
  type PlanDiagnostic,
  type PlanOptions,
  planExample,
  repoRoot,
  scratchDir,
} from "../../support/workspace/index.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

export async function plan(name: string, provider: string, opts: Omit<PlanOptions, "provider"> = {}) {
  const dir = await scratchDir(`plan-${path.basename(name)}-${provider}`);
  dirs.push(dir);
  return { dir, ...(await planExample(name, dir, { provider, ...opts })) };
}

/** The diagnostic as plan prints it, for a failure message. */
export const show = (d: PlanDiagnostic) =>
  `${d.severity}: ${d.summary} at ${d.file ? path.relative(repoRoot, d.file) : "(no file)"}:${d.line ?? "-"}`;

/** Whether the diagnostic points at one of the module's own files (anything in the repository but the template's copy). */
export function inModule(d: PlanDiagnostic, templateDir: string): boolean {
  const file = d.file ?? "";
  return file.startsWith(`${repoRoot}/`) && !file.startsWith(`${templateDir}/`);
}

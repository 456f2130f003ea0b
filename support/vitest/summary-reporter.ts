// Lists, at the end of a run, the tests that failed and those that passed only
// on a retry, each with its file and first error line. tools/test.sh prints
// the list again after the matrix table, so the last lines of a CI log name
// what went wrong rather than only "FAILED: integration tests".
import { appendFileSync } from "node:fs";
import path from "node:path";
import type { Reporter, TestCase } from "vitest/node";

function firstLine(testCase: TestCase): string {
  const result = testCase.result();
  const message = result.errors?.[0]?.message ?? "";
  return message.split("\n")[0]?.slice(0, 300) ?? "";
}

export default class SummaryReporter implements Reporter {
  private lines: string[] = [];

  onTestCaseResult(testCase: TestCase): void {
    const file = path.relative(process.cwd(), testCase.module.moduleId);
    const name = `${file} > ${testCase.fullName}`;
    if (testCase.result().state === "failed") this.lines.push(`FAILED ${name}: ${firstLine(testCase)}`);
    else if (testCase.diagnostic()?.flaky)
      this.lines.push(
        `FLAKY (failed, then passed on retry ${testCase.diagnostic()?.retryCount}) ${name}: ${firstLine(testCase)}`,
      );
  }

  onTestRunEnd(): void {
    if (this.lines.length === 0) return;
    const text = `${this.lines.join("\n")}\n`;
    console.log(`\ntests that failed or needed a retry:\n${text}`);
    if (process.env.TEST_SUMMARY_FILE) appendFileSync(process.env.TEST_SUMMARY_FILE, text);
  }
}

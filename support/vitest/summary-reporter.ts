// Lists, at the end of a run, the tests that failed, those that passed only
// on a retry, each with its file and first error line, and those skipped with
// a reason (ctx.skip(note): every conditional skip here gives one; a test
// left out by a filter has none and is not listed). tools/test.sh prints the
// list again after the matrix table, so the last lines of a CI log name what
// went wrong or did not run, and fails a CI run with a skip.
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
    const result = testCase.result();
    if (result.state === "failed") this.lines.push(`FAILED ${name}: ${firstLine(testCase)}`);
    else if (result.state === "skipped" && result.note) this.lines.push(`SKIPPED ${name}: ${result.note}`);
    else if (testCase.diagnostic()?.flaky)
      this.lines.push(
        `FLAKY (failed, then passed on retry ${testCase.diagnostic()?.retryCount}) ${name}: ${firstLine(testCase)}`,
      );
  }

  onTestRunEnd(): void {
    if (this.lines.length === 0) return;
    const text = `${this.lines.join("\n")}\n`;
    console.log(`\ntests that failed, needed a retry or were skipped:\n${text}`);
    if (process.env.TEST_SUMMARY_FILE) appendFileSync(process.env.TEST_SUMMARY_FILE, text);
  }
}

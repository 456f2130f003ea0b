import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    reporters: ["default", "./support/vitest/summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          // Tests share one machine's ports and processes; run files one at a time.
          fileParallelism: false,
          // Real processes on a shared 2-core machine: a test that fails once is
          // run again, and the summary reporter lists it as FLAKY so it is fixed,
          // not forgotten.
          retry: 1,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

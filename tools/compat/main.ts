// `npm run compat`: checks the module's lifecycle against one Goose binary and
// prints a verdict per behaviour (docs/development.md). tools/compat.sh sets
// up the toolchain, bundles this file and runs it.
import path from "node:path";
import { repoRoot } from "../../support/workspace/index.js";
import { cleanupRun, LifecycleError } from "../lifecycle/lifecycle.js";
import { runCompat } from "./compat.js";
import { type CompatCli, formatReport, parseArgs, passed, USAGE } from "./verdicts.js";

async function main(): Promise<number> {
  let cli: CompatCli | "help";
  try {
    cli = parseArgs(process.argv.slice(2), (p) => path.resolve(p));
  } catch (error) {
    process.stderr.write(`compat: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (cli === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = cli;

  // Ctrl-C or a kill: end what was started (unless --keep), then exit.
  let started: { runDir: string; home: string } | null = null;
  const onSignal = (name: NodeJS.Signals) => {
    process.stdout.write(`\ncompat: ${name} received; ${options.keep || !started ? "stopping" : "cleaning up"}\n`);
    const done = options.keep || !started ? Promise.resolve([]) : cleanupRun(started.runDir, started.home);
    void done.finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    const report = await runCompat({
      goose: options.goose,
      keep: options.keep,
      logger: (line) => process.stdout.write(`compat: ${line}\n`),
      onRunDir: (run) => {
        started = run;
      },
    });
    process.stdout.write(`${formatReport(report, (p) => path.relative(repoRoot, p) || ".")}\n`);
    return passed(report) ? 0 : 1;
  } catch (error) {
    // Only the setup before the first behaviour fails this way; a behaviour's failure is its verdict.
    const message =
      error instanceof LifecycleError
        ? error.message
        : `unexpected failure: ${(error as Error)?.stack ?? String(error)}`;
    process.stderr.write(`\ncompat: FAIL: ${message}\n`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`compat: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);

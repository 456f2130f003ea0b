// A separate process for the lifecycle tests: the lock and the claims are
// about several processes at once, and a lock held by a process that dies.
// Bundled by the tests with esbuild. Waits for the file `go` names (so that
// several start at the same moment), does one thing, prints the outcome as
// JSON, and, when it holds something, keeps it until its stdin closes.

import { access } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { acquireLifecycleLock } from "../../../src/lifecycle/lock.js";
import { recordStop } from "../../../src/lifecycle/stop-request.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { claimSupervisorPid } from "../../../src/supervisor/process.js";

const [command, moduleDir, go, extra] = process.argv.slice(2) as [string, string, string, string | undefined];

async function untilGo(): Promise<void> {
  for (;;) {
    if (
      await access(go).then(
        () => true,
        () => false,
      )
    )
      return;
    await delay(1);
  }
}

function holdUntilStdinCloses(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.on("end", resolve);
    process.stdin.resume();
  });
}

async function main(): Promise<void> {
  await untilGo();
  if (command === "claim") {
    const paths = { dir: moduleDir, supervisorPid: `${moduleDir}/supervisor.pid` } as ModulePaths;
    const outcome = await claimSupervisorPid(paths, 0);
    process.stdout.write(`${JSON.stringify(outcome)}\n`);
    if ("claimed" in outcome) await holdUntilStdinCloses();
  } else if (command === "hold") {
    const outcome = await acquireLifecycleLock(moduleDir, extra ?? "test", { patienceMs: () => 60_000 });
    process.stdout.write(`${JSON.stringify("lock" in outcome ? { held: true } : outcome)}\n`);
    if ("lock" in outcome) await holdUntilStdinCloses();
  } else if (command === "count") {
    for (let i = 0; i < Number(extra); i++) await recordStop(moduleDir);
    process.stdout.write(`${JSON.stringify({ counted: Number(extra) })}\n`);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${(error as Error).stack}\n`);
    process.exit(2);
  },
);

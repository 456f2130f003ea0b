// `npm run bench -- [runs] [stop] [start] [snapshot] [scaling] [runtime] [supervisor]`:
// the timing measurements, each printed with min/median/max, its
// goal, and the machine's load average before and after (the machine is
// shared). Runs per variant default to 5; no name runs them all. Timing goals
// live here, never in tests.

import { benchRuntime } from "./runtime.js";
import { benchScaling } from "./scaling.js";
import { benchSnapshot } from "./snapshot.js";
import { benchStart } from "./start.js";
import { loadLine } from "./stats.js";
import { benchStop } from "./stop.js";
import { benchSupervisor } from "./supervisor.js";

const SECTIONS: Record<string, (runs: number) => Promise<void> | void> = {
  stop: benchStop,
  start: benchStart,
  snapshot: (runs) => benchSnapshot(runs * 6),
  scaling: benchScaling,
  runtime: (runs) => benchRuntime(runs * 4),
  supervisor: benchSupervisor,
};

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const runs = Number(args.find((a) => /^[0-9]+$/.test(a)) ?? 5);
  const names = args.filter((a) => !/^[0-9]+$/.test(a));
  const unknown = names.filter((n) => !(n in SECTIONS));
  if (unknown.length > 0) {
    console.error(`bench: unknown section(s) ${unknown.join(", ")}; choose from ${Object.keys(SECTIONS).join(", ")}`);
    return 2;
  }
  for (const name of names.length > 0 ? names : Object.keys(SECTIONS)) {
    console.log(`\n== ${name} (${loadLine()})`);
    await SECTIONS[name]?.(runs);
    console.log(`== ${name} done (${loadLine()})`);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`bench: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);

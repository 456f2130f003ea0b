// How the benchmarks report: min/median/max of each figure, and the machine's
// load at the time (the machine is shared, so a figure means little without it).
import { cpus, loadavg } from "node:os";

export interface Summary {
  min: number;
  median: number;
  max: number;
  n: number;
}

export function summarize(values: number[]): Summary {
  if (values.length === 0) throw new Error("no values to summarize");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number, n: sorted.length };
}

function ms(value: number): string {
  return value >= 100 ? `${Math.round(value)}` : value.toFixed(1);
}

/** One aligned line: the figure's name, then min, median and max in ms. */
export function figure(name: string, values: number[]): string {
  const s = summarize(values);
  return `${name.padEnd(50)} min ${ms(s.min).padStart(6)} ms, median ${ms(s.median).padStart(6)} ms, max ${ms(s.max).padStart(6)} ms (n=${s.n})`;
}

export function median(values: number[]): number {
  return summarize(values).median;
}

/** When, and the 1, 5 and 15 minute load averages against the number of cores: what a quoted figure cites. */
export function loadLine(): string {
  const [one, five, fifteen] = loadavg().map((v) => v.toFixed(2));
  const at = new Date().toISOString().replace("T", " ").slice(0, 16);
  return `${at} UTC, load average ${one}, ${five}, ${fifteen} on ${cpus().length} core(s)`;
}

/** Times an async step in milliseconds, to a tenth. */
export async function timed(step: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await step();
  return Math.round((performance.now() - started) * 10) / 10;
}

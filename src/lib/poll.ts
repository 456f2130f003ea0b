import { setTimeout as delay } from "node:timers/promises";

/**
 * Polls `check` until it returns a value, the deadline passes, or `abort` says
 * to stop. `wait` sleeps between checks (by default for the interval); one
 * that wakes early on an event makes the poll react to it at once.
 */
export async function pollUntil<T>(
  check: () => Promise<T | undefined>,
  opts: {
    timeoutMs: number;
    intervalMs: number;
    abort?: () => string | undefined;
    wait?: (ms: number) => Promise<unknown>;
  },
): Promise<{ value: T } | { timedOut: true } | { aborted: string }> {
  const deadline = Date.now() + opts.timeoutMs;
  const wait = opts.wait ?? delay;
  for (;;) {
    const value = await check();
    if (value !== undefined) return { value };
    const reason = opts.abort?.();
    if (reason) return { aborted: reason };
    const left = deadline - Date.now();
    if (left <= 0) return { timedOut: true };
    await wait(Math.min(opts.intervalMs, left));
  }
}

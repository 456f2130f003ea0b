import { setTimeout as delay } from "node:timers/promises";

/** Polls `check` until it returns a value, the deadline passes, or `abort` says to stop. */
export async function pollUntil<T>(
  check: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs: number; abort?: () => string | undefined },
): Promise<{ value: T } | { timedOut: true } | { aborted: string }> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return { value };
    const reason = opts.abort?.();
    if (reason) return { aborted: reason };
    const left = deadline - Date.now();
    if (left <= 0) return { timedOut: true };
    await delay(Math.min(opts.intervalMs, left));
  }
}

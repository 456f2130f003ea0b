/**
 * Waits for steps that were started at once, independent of each other, and
 * gives their results in order. When any failed, it throws the failure of the
 * first in that order, and only once every step has ended: the error a start
 * reports does not depend on which step happened to end first, and nothing it
 * started is still writing when it is reported.
 */
export async function sideBySide<T extends readonly unknown[]>(
  steps: {
    readonly [K in keyof T]: Promise<T[K]>;
  },
): Promise<T> {
  const settled = await Promise.allSettled(steps);
  const values: unknown[] = [];
  for (const outcome of settled) {
    if (outcome.status === "rejected") throw outcome.reason;
    values.push(outcome.value);
  }
  return values as unknown as T;
}

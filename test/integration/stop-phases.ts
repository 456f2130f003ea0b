// Shared by the stop's and the lifecycle's tests, with no hooks of its own.

/**
 * The stop's phases in the order its log names them (src/stop.ts): the one
 * table the tests compare against. A turn that ran is saved again after it.
 * `record` writes only after Goose left by itself (src/stop.ts).
 */
export function stopPhases(opts: { turnRan?: boolean } = {}): string[] {
  const again = opts.turnRan ? ["save"] : [];
  return ["lock", "supervisor", "find", "save", "turn", ...again, "snapshot", "stop", "leftovers", "verify", "record"];
}

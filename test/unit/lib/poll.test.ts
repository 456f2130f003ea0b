import { describe, expect, it } from "vitest";
import { pollUntil } from "../../../src/lib/poll.js";

/** A check that answers undefined until its `at`-th call, then "done"; counts its calls. */
function answersOnCall(at: number) {
  const check = async () => {
    check.calls++;
    return check.calls >= at ? "done" : undefined;
  };
  check.calls = 0;
  return check;
}

describe("pollUntil", () => {
  it("returns the first value the check gives, without calling it again", async () => {
    const check = answersOnCall(3);
    expect(await pollUntil(check, { timeoutMs: 60_000, intervalMs: 0 })).toEqual({ value: "done" });
    expect(check.calls).toBe(3);
  });

  it("checks once more at the deadline, then gives up", async () => {
    const check = answersOnCall(Number.POSITIVE_INFINITY);
    expect(await pollUntil(check, { timeoutMs: 0, intervalMs: 10 })).toEqual({ timedOut: true });
    expect(check.calls).toBe(1);
  });

  it("stops as soon as abort gives a reason, after the check that ran", async () => {
    const check = answersOnCall(Number.POSITIVE_INFINITY);
    let asked = 0;
    const abort = () => (++asked === 2 ? "the process exited" : undefined);
    expect(await pollUntil(check, { timeoutMs: 60_000, intervalMs: 0, abort })).toEqual({
      aborted: "the process exited",
    });
    expect(check.calls).toBe(2);
  });

  it("prefers a value over an abort in the same round", async () => {
    const check = answersOnCall(1);
    expect(await pollUntil(check, { timeoutMs: 60_000, intervalMs: 0, abort: () => "gone" })).toEqual({
      value: "done",
    });
  });
});

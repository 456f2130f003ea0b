import { describe, expect, it } from "vitest";
import {
  decideRestart,
  NO_FAILURES,
  noteRunEnded,
  type RestartHistory,
  type RestartPolicy,
} from "../../../src/supervisor/restart-policy.js";

// A policy written out here, so the expectations do not come from the module's own constants.
const policy: RestartPolicy = { firstDelayMs: 1000, maxFailures: 5, windowMs: 600_000, stayUpMs: 60_000 };
const T = 1_000_000_000;
const history = (...failures: number[]): RestartHistory => ({ failures });
const decide = (h: RestartHistory, now = T, extra: { stopRequested?: boolean; folderPresent?: boolean } = {}) =>
  decideRestart(
    {
      history: h,
      now,
      stopRequested: extra.stopRequested ?? false,
      folderPresent: extra.folderPresent ?? true,
      lastProblem: "Goose exited right after it started",
    },
    policy,
  );

describe("decideRestart", () => {
  it.each([
    // failures within the window before now, expected wait before the next restart, attempt number
    [[], 1000, 1],
    [[T - 1000], 2000, 2],
    [[T - 3000, T - 1000], 4000, 3],
    [[T - 7000, T - 5000, T - 1000], 8000, 4],
    [[T - 15_000, T - 7000, T - 5000, T - 1000], 16_000, 5],
  ])("after failures %o: restart in %i ms (attempt %i)", (failures, delayMs, attempt) => {
    expect(decide(history(...failures))).toEqual({ action: "restart", delayMs, attempt });
  });

  it("gives up after 5 failed restarts within 10 minutes, and says why", () => {
    const step = decide(history(T - 500_000, T - 400_000, T - 300_000, T - 200_000, T - 1000));
    expect(step.action).toBe("give-up");
    expect(step.action === "give-up" && step.reason).toMatch(/^5 restarts failed within 10 minutes/);
    expect(step.action === "give-up" && step.reason).toContain("Goose exited right after it started");
  });

  it("forgets failures older than the window", () => {
    const step = decide(history(T - 700_000, T - 650_000, T - 300_000, T - 200_000, T - 1000));
    expect(step).toEqual({ action: "restart", delayMs: 8000, attempt: 4 });
  });

  it.each([
    [{ stopRequested: true }, /stop script asked/],
    [{ folderPresent: false }, /folder is gone/],
    [{ stopRequested: true, folderPresent: false }, /stop script asked/],
  ])("stands down when %o, even with no failure and with too many", (extra, reason) => {
    for (const h of [NO_FAILURES, history(T - 5, T - 4, T - 3, T - 2, T - 1)]) {
      const step = decide(h, T, extra);
      expect(step.action).toBe("stand-down");
      expect(step.action === "stand-down" && step.reason).toMatch(reason);
    }
  });
});

describe("noteRunEnded", () => {
  it.each([
    // what ended, failures before, failures after
    ["a restart that could not launch", { restarted: true, launched: false, ran: 2000 }, [T - 9000], [T - 9000, T]],
    ["a restart that died within a minute", { restarted: true, launched: true, ran: 59_999 }, [], [T]],
    ["a restart that stayed up a minute", { restarted: true, launched: true, ran: 60_000 }, [T - 9000, T - 5000], []],
    ["the start's own launch, dying early", { restarted: false, launched: true, ran: 5000 }, [], []],
    ["the start's own launch, after a long run", { restarted: false, launched: true, ran: 3_600_000 }, [], []],
    ["a failure past the window is dropped", { restarted: true, launched: false, ran: 10 }, [T - 600_000], [T]],
  ])("%s", (_what, run, before, after) => {
    const next = noteRunEnded(
      history(...before),
      { restarted: run.restarted, launched: run.launched, startedAt: T - run.ran, endedAt: T },
      policy,
    );
    expect(next.failures).toEqual(after);
  });

  it("five quick failures in a row end in a give-up; one long run in between starts the count again", () => {
    let h = NO_FAILURES;
    let now = T;
    const fail = () => {
      now += 5000;
      h = noteRunEnded(h, { restarted: true, launched: false, startedAt: now - 1000, endedAt: now }, policy);
    };
    for (let i = 0; i < 4; i++) fail();
    expect(decide(h, now).action).toBe("restart");
    h = noteRunEnded(h, { restarted: true, launched: true, startedAt: now, endedAt: now + 120_000 }, policy);
    now += 120_000;
    for (let i = 0; i < 4; i++) fail();
    expect(decide(h, now)).toEqual({ action: "restart", delayMs: 16_000, attempt: 5 });
    fail();
    expect(decide(h, now).action).toBe("give-up");
  });
});

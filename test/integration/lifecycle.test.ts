// The main job as a test, in both its modes: a plain workspace's whole life,
// rendered from examples/workspace-template, with three restarts in a row; and
// a task's, from examples/task-template (`npm run lifecycle -- --task`), with one.

import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { agentSignals, processesWithEnv } from "../../support/workspace/index.js";
import { LifecycleError, runLifecycle } from "../../tools/lifecycle/lifecycle.js";
import { stopPhases } from "./stop-phases.js";

describe.each([
  {
    task: false,
    restarts: 3,
    template: "examples/workspace-template",
    opening: "the first message typed into the chat",
  },
  { task: true, restarts: 1, template: "examples/task-template", opening: "the task prompt" },
])("workspace lifecycle ($template, $restarts restart(s))", ({ task, restarts, template, opening }) => {
  it(`resumes the same Goose session with its history, delivers ${opening} once, and leaves nothing behind`, async () => {
    const progress: string[] = [];
    let home = "";
    const report = await runLifecycle({
      task,
      restarts,
      logger: (line) => progress.push(line),
      onRunDir: (run) => {
        home = run.home;
      },
    }).catch((error: Error) => {
      const step = error instanceof LifecycleError ? error.step : "unknown";
      throw new Error(`lifecycle failed at ${step}: ${error.message}\nprogress:\n${progress.join("\n")}`);
    });
    const { cycles, checks } = report;
    const context = [
      `progress:\n${progress.join("\n")}\nchecks:`,
      ...checks.map((c) => `${c.ok ? "PASS" : "FAIL"} ${c.name}: ${c.detail}`),
      ...cycles.map((c) => `stop #${c.index}:\n${c.stopLines.join("\n")}`),
    ].join("\n");
    const of = <T>(read: (c: (typeof cycles)[number]) => T) => cycles.map(read);

    expect(report.mode).toBe(task ? "task" : "plain");
    expect(report.template).toBe(template);
    expect(cycles, context).toHaveLength(restarts + 1);
    // Exactly one delivery of the prompt (or the first message), over every start.
    expect(report.promptDeliveries, context).toBe(1);
    // The same Goose session every time: cold once, then resumed.
    expect(
      of((c) => c.mode),
      context,
    ).toEqual(["cold", ...Array(restarts).fill("warm")]);
    expect(cycles[0]?.sessionId, context).toBeTruthy();
    expect(new Set(of((c) => c.sessionId)).size, context).toBe(1);
    expect(
      of((c) => c.sessionsWithName),
      context,
    ).toEqual(Array(restarts + 1).fill(1));
    // A history that only grows: restored exactly, then one more exchange.
    expect(cycles[0]?.messagesBeforeStop, context).toBeGreaterThan(0);
    for (const [i, cycle] of cycles.entries()) {
      const previous = cycles[i - 1];
      if (!previous) continue;
      expect(cycle.messagesAfterStart, `restart #${i}: restored count\n${context}`).toBe(previous.messagesBeforeStop);
      expect(cycle.messagesAfterStart, context).toBeGreaterThanOrEqual(previous.messagesAfterStart);
      expect(cycle.messagesBeforeStop, `restart #${i}: history grows\n${context}`).toBeGreaterThan(
        cycle.messagesAfterStart,
      );
    }
    // Every stop, in the stop script's own words: the supervisor stood down, the
    // save confirmed (or already done by the autosave), no turn to wait for, then
    // Goose left on `/exit`. A fallback would print a line naming SIGTERM or SIGKILL.
    for (const cycle of cycles) {
      const stopped = cycle.stopLines.join("\n");
      const where = `stop #${cycle.index}\n${context}`;
      expect(
        [...stopped.matchAll(/phase (\w+):/g)].map((m) => m[1]),
        where,
      ).toEqual(stopPhases());
      expect(stopped, where).toMatch(
        /save \(before stopping\): (AgentAPI logged the save|state file rewritten|nothing changed since the last save)/,
      );
      for (const line of ["turn: agent idle at its prompt", "Goose exited on /exit"])
        expect(stopped, where).toContain(line);
      expect(agentSignals(stopped), where).toEqual([]);
      if (!task) expect(stopped, where).toContain("snapshot skipped: this workspace is not a Coder task");
    }
    // A task's every stop posted the log snapshot to the Coder endpoint; a plain workspace's posted nothing.
    expect(report.snapshots, context).toHaveLength(task ? restarts + 1 : 0);
    for (const snapshot of report.snapshots) {
      expect(snapshot.taskId).toBe(report.taskId);
      expect(snapshot.tokenMatched).toBe(true);
      expect(snapshot.messages).toBeGreaterThan(0);
    }
    expect(
      checks.filter((c) => !c.ok),
      context,
    ).toEqual([]);
    expect(report.ok).toBe(true);
    // No process left behind, and the throwaway folder is gone.
    expect(report.leftAfterStop, context).toEqual([]);
    expect(home).not.toBe("");
    expect(await processesWithEnv(`HOME=${home}`)).toEqual([]);
    expect(existsSync(report.runDir)).toBe(false);
  }, 240_000);
});

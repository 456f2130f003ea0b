import { spawnSync } from "node:child_process";
import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { recordInstallDone } from "../../../src/lifecycle/install-done.js";
import { judgeInstallState, waitForInstall } from "../../../src/start/install-wait.js";
import { scratchFolders } from "../scratch.js";

const RUN = "4242.987654";
const LOG = "/home/u/.coder-modules/coder/goose/logs/install.log";
const SEE = `see the "Goose: Install Script" log in the Coder dashboard, or ${LOG}`;

describe("judgeInstallState", () => {
  const cases: Array<[string, string | null, { done?: string; alive?: boolean; waitedMs?: number }, unknown]> = [
    ["no file yet", null, {}, { kind: "wait" }],
    ["an earlier agent run's, done well", "1.1 done 0\n", {}, { kind: "wait" }],
    ["a run whose name only begins like this one's", "4242.9876543 done 0\n", {}, { kind: "wait" }],
    ["this run's, done well", "4242.987654 done 0\n", {}, { kind: "done" }],
    [
      "this run's, failed",
      "4242.987654 done 3\n",
      {},
      { kind: "failed", message: `${SEE}: the install script failed (exit 3), so Goose is not started.` },
    ],
    ["this run's, running", "4242.987654 running 77\n", { alive: true }, { kind: "wait" }],
    [
      "this run's, running, its process gone",
      "4242.987654 running 77\n",
      { alive: false },
      { kind: "gone", message: `${SEE}: the install script ended before it finished, so Goose is not started.` },
    ],
    ["a PID that is not a number", "4242.987654 running x\n", { alive: false }, { kind: "wait" }],
    ["a line with more fields", "4242.987654 done 0 0\n", {}, { kind: "wait" }],
    [
      "running, and its script recorded that it went well",
      "4242.987654 running 77\n",
      { done: "4242.987654 done\n" },
      { kind: "done" },
    ],
    ["none yet, and its script recorded that it went well", null, { done: "4242.987654 done\n" }, { kind: "done" }],
    [
      "running, and an earlier run's record that it went well",
      "4242.987654 running 77\n",
      { done: "1.1 done\n" },
      { kind: "wait" },
    ],
    [
      "running, and a record that is not the script's",
      "4242.987654 running 77\n",
      { done: "4242.987654 done 0\n" },
      { kind: "wait" },
    ],
    ["none yet, just inside the bound", null, { waitedMs: 59_999 }, { kind: "wait" }],
    [
      "none after 60 s",
      "1.1 done 0\n",
      { waitedMs: 60_000 },
      {
        kind: "failed",
        message:
          "restart the workspace: the install script did not begin within 60 s of this start, so Goose is not started.",
      },
    ],
  ];
  it.each(cases)("%s", (_, state, opts, verdict) => {
    const judged = judgeInstallState(state, RUN, {
      done: opts.done ?? null,
      alive: () => opts.alive ?? true,
      waitedMs: opts.waitedMs ?? 0,
      name: "Goose",
      installLog: LOG,
    });
    expect(judged).toEqual(verdict);
  });
});

describe("waitForInstall", () => {
  const folder = scratchFolders("install-wait-test");
  /** Writes the state as the install's wrapper does: a new file renamed over the name. */
  const record = async (dir: string, text: string) => {
    await writeFile(path.join(dir, "install.state.new"), `${text}\n`);
    await rename(path.join(dir, "install.state.new"), path.join(dir, "install.state"));
  };

  it("resolves once this run's install writes that it is done, not before", async () => {
    const dir = await folder();
    await record(dir, `${RUN} running ${process.pid}`);
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((text) => lines.push(String(text)) > 0);
    let ended = false;
    const waiting = waitForInstall(dir, RUN, "Goose").then(() => {
      ended = true;
    });
    // It has read the state once and found the install running.
    await vi.waitFor(() => expect(lines.join("")).toContain("waiting for the install script"));
    write.mockRestore();
    expect(ended).toBe(false);
    await record(dir, `${RUN} done 0`);
    await waiting;
    expect(ended).toBe(true);
  });

  it("resolves once this run's install script records that it went well, before its wrapper says so", async () => {
    const dir = await folder();
    await record(dir, `${RUN} running ${process.pid}`);
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((text) => lines.push(String(text)) > 0);
    const waiting = waitForInstall(dir, RUN, "Goose");
    await vi.waitFor(() => expect(lines.join("")).toContain("waiting for the install script"));
    write.mockRestore();
    await recordInstallDone(dir, RUN);
    await waiting;
    expect(await readFile(path.join(dir, "install.state"), "utf8")).toBe(`${RUN} running ${process.pid}\n`);
  });

  it("fails, naming the install's log, when the install failed", async () => {
    const dir = await folder();
    await record(dir, `${RUN} done 2`);
    await expect(waitForInstall(dir, RUN, "Goose")).rejects.toThrow(
      /^see the "Goose: Install Script" log in the Coder dashboard, or .*\/logs\/install\.log: the install script failed \(exit 2\)/,
    );
  });

  it("fails when the install's process is gone without saying how it ended", async () => {
    const dir = await folder();
    const gone = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim();
    await record(dir, `${RUN} running ${gone}`);
    await expect(waitForInstall(dir, RUN, "Goose")).rejects.toThrow(/the install script ended before it finished/);
  });
});

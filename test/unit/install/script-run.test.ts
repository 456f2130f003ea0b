import { symlink, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runToLog } from "../../../src/install/script-run.js";
import { readText, scratchDir } from "../scratch.js";

const at = scratchDir("script-run-test");

describe("runToLog", () => {
  it("appends both streams to the log, with stdin closed", async () => {
    const log = at("run.log");
    await writeFile(log, "before\n");
    const opts = { logFile: log, cwd: at(), env: { PATH: "/usr/bin:/bin" } };
    const code = await runToLog("/bin/sh", ["-c", "cat; echo out; echo err >&2; exit 4"], opts);
    expect(code).toBe(4);
    expect(await readText(log)).toBe("before\nout\nerr\n");
  });

  it("refuses to write through a link planted at the log path", async () => {
    const victim = at("victim");
    await writeFile(victim, "precious");
    await symlink(victim, at("linked.log"));
    const run = runToLog("/bin/echo", ["x"], { logFile: at("linked.log"), cwd: at(), env: {} });
    await expect(run).rejects.toThrow(/ELOOP/);
    expect(await readText(victim)).toBe("precious");
  });
});

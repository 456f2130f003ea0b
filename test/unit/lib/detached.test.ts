import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { startDetached } from "../../../src/lib/detached.js";
import { readText, scratchDir } from "../scratch.js";

const at = scratchDir("detached-test");

describe("startDetached", () => {
  it("starts the program in a session of its own, stdin at its end and output appended to the log", async () => {
    const logFile = at("detached.log");
    await writeFile(logFile, "earlier\n");
    // The program says its own session (field 6 of proc(5)'s stat), then whether stdin had anything.
    const script =
      'set -- $(sed "s/.*) //" /proc/$$/stat); echo "pid $$ session $4"; if read -r line; then echo got; else echo eof; fi; echo err >&2';
    const child = await startDetached("/bin/sh", ["-c", script], {
      cwd: at(),
      env: {},
      logFile,
      firstLine: "--- first\n",
    });
    await new Promise((resolve) => child.once("exit", resolve));
    expect(await readText(logFile)).toBe(`earlier\n--- first\npid ${child.pid} session ${child.pid}\neof\nerr\n`);
  });

  it("rejects, naming the cause, when the program cannot be started", async () => {
    await expect(
      startDetached(at("no-such-program"), [], { cwd: at(), env: {}, logFile: at("none.log") }),
    ).rejects.toThrow(/ENOENT/);
  });
});

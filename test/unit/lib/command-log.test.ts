import { readFile, stat, symlink, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { logTail, openLog, tail } from "../../../src/lib/command-log.js";
import { runToLog } from "../../../src/lib/exec.js";
import { scratchPaths } from "../scratch.js";

const folder = scratchPaths("command-log-test");
let at: Awaited<ReturnType<typeof folder>>;
beforeAll(async () => {
  at = await folder();
});

describe("tail", () => {
  it.each([
    ["fewer lines than asked", "a\nb\n", 5, "a\nb"],
    ["the last lines only", "1\n2\n3\n4\n", 2, "3\n4"],
    ["trailing blank lines do not count", "1\n2\n3\n\n\n  \n", 2, "2\n3"],
    ["empty text", "", 3, ""],
  ])("%s", (_, text, lines, out) => {
    expect(tail(text, lines)).toBe(out);
  });
});

describe("logTail", () => {
  it("reads the end of a log, and says so when there is none", async () => {
    await writeFile(at("some.log"), "first\nsecond\nthird\n");
    expect(await logTail(at("some.log"), 2)).toBe("second\nthird");
    expect(await logTail(at("missing.log"))).toBe("(no log)");
  });
});

describe("openLog", () => {
  it("creates a missing log 0600 and appends to an existing one", async () => {
    const file = at("append.log");
    for (const line of ["one\n", "two\n"]) {
      const handle = await openLog(file);
      await handle.write(line);
      await handle.close();
    }
    expect(await readFile(file, "utf8")).toBe("one\ntwo\n");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});

describe("runToLog", () => {
  it("appends both streams to the log, with stdin closed", async () => {
    const log = at("run.log");
    await writeFile(log, "before\n");
    const opts = { logFile: log, cwd: at(), env: { PATH: "/usr/bin:/bin" } };
    const code = await runToLog("/bin/sh", ["-c", "cat; echo out; echo err >&2; exit 4"], opts);
    expect(code).toBe(4);
    expect(await readFile(log, "utf8")).toBe("before\nout\nerr\n");
  });

  it("refuses to write through a link planted at the log path", async () => {
    const victim = at("victim");
    await writeFile(victim, "precious");
    await symlink(victim, at("linked.log"));
    await expect(runToLog("/bin/echo", ["x"], { logFile: at("linked.log"), cwd: at(), env: {} })).rejects.toThrow(
      /ELOOP/,
    );
    expect(await readFile(victim, "utf8")).toBe("precious");
  });
});

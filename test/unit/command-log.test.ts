import { mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logTail, openLog, tail } from "../../src/command-log.js";
import { runToLog } from "../../src/exec.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "command-log-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("tail", () => {
  it.each([
    { name: "fewer lines than asked", text: "a\nb\n", lines: 5, out: "a\nb" },
    { name: "the last lines only", text: "1\n2\n3\n4\n", lines: 2, out: "3\n4" },
    { name: "trailing blank lines do not count", text: "1\n2\n3\n\n\n  \n", lines: 2, out: "2\n3" },
    { name: "empty text", text: "", lines: 3, out: "" },
  ])("$name", ({ text, lines, out }) => {
    expect(tail(text, lines)).toBe(out);
  });
});

describe("logTail", () => {
  it("reads the end of a log, and says so when there is none", async () => {
    await writeFile(path.join(dir, "some.log"), "first\nsecond\nthird\n");
    expect(await logTail(path.join(dir, "some.log"), 2)).toBe("second\nthird");
    expect(await logTail(path.join(dir, "missing.log"))).toBe("(no log)");
  });
});

describe("openLog", () => {
  it("creates a missing log 0600 and appends to an existing one", async () => {
    const file = path.join(dir, "append.log");
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
    const log = path.join(dir, "run.log");
    await writeFile(log, "before\n");
    const code = await runToLog("/bin/sh", ["-c", "cat; echo out; echo err >&2; exit 4"], {
      logFile: log,
      cwd: dir,
      env: { PATH: "/usr/bin:/bin" },
    });
    expect(code).toBe(4);
    expect(await readFile(log, "utf8")).toBe("before\nout\nerr\n");
  });

  it("refuses to write through a link planted at the log path", async () => {
    const victim = path.join(dir, "victim");
    await writeFile(victim, "precious");
    await symlink(victim, path.join(dir, "linked.log"));
    await expect(
      runToLog("/bin/echo", ["x"], { logFile: path.join(dir, "linked.log"), cwd: dir, env: {} }),
    ).rejects.toThrow(/ELOOP/);
    expect(await readFile(victim, "utf8")).toBe("precious");
  });
});

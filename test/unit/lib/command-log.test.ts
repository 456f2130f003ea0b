import { closeSync, writeSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { logTail, openLog, tail } from "../../../src/lib/command-log.js";
import { modeOf, readText, scratchDir } from "../scratch.js";

const at = scratchDir("command-log-test");

it.each([
  ["fewer lines than asked", "a\nb\n", 5, "a\nb"],
  ["the last lines only", "1\n2\n3\n4\n", 2, "3\n4"],
  ["trailing blank lines do not count", "1\n2\n3\n\n\n  \n", 2, "2\n3"],
  ["empty text", "", 3, ""],
])("tail %s", (_, text, lines, out) => {
  expect(tail(text, lines)).toBe(out);
});

it("logTail reads the end of a log, and says so when there is none", async () => {
  await writeFile(at("some.log"), "first\nsecond\nthird\n");
  expect(await logTail(at("some.log"), 2)).toBe("second\nthird");
  expect(await logTail(at("missing.log"))).toBe("(no log)");
});

it("openLog creates a missing log 0600 and appends to an existing one", async () => {
  const file = at("append.log");
  for (const line of ["one\n", "two\n"]) {
    const fd = openLog(file);
    writeSync(fd, line);
    closeSync(fd);
  }
  expect(await readText(file)).toBe("one\ntwo\n");
  expect(await modeOf(file)).toBe(0o600);
});

// The supervisor's stand-down (src/supervisor/supervisor.sh, term_children) against a real
// sh: a stop's SIGTERM can land between starting a helper in the background and recording
// `helper=$!`, so the stand-down must end every child of the shell, recorded or not.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const script = readFileSync(new URL("../../../src/supervisor/supervisor.sh", import.meta.url), "utf8");
const termChildren = /^term_children\(\) \{\n[\s\S]*?\n\}\n/m.exec(script)?.[0];

it("term_children ends every child of the shell, including ones whose PID the loop never recorded", async () => {
  expect(termChildren, "supervisor.sh defines term_children").toBeDefined();
  // Two helpers started as run_mode starts one, neither PID kept: the window before
  // `helper=$!`. Each `wait` then reports how its child ended (143: SIGTERM). A child
  // term_children missed keeps its `wait` (and the test) until the 60 s sleep ends,
  // and reports 0.
  const body = `${termChildren}
sleep 60 &
first=$!
sleep 60 &
second=$!
term_children
wait "$first"; echo "first $?"
wait "$second"; echo "second $?"`;
  const { stdout } = await promisify(execFile)("/bin/sh", ["-c", body], { timeout: 90_000 });
  expect(stdout).toBe("first 143\nsecond 143\n");
}, 120_000);

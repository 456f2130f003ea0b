import { readFile, symlink, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { holdLogLines, keepLogIn, log } from "../../../src/lib/log.js";
import { modeOf, scratchDir } from "../scratch.js";

const at = scratchDir("log-test");

it("keeps this run's lines in a new private file, and never writes through a link planted at its name", async () => {
  await writeFile(at("precious"), "the user's own\n");
  await symlink(at("precious"), at("install.log"));
  keepLogIn(at("install.log"));
  log("phase install: 12 ms");
  expect(await readFile(at("precious"), "utf8")).toBe("the user's own\n");
  expect(await readFile(at("install.log"), "utf8")).toMatch(
    /^\d{4}-\d\d-\d\dT[\d:.]+Z goose-module: phase install: 12 ms\n$/,
  );
  expect(await modeOf(at("install.log"))).toBe(0o600);
});

it("writes the lines held before the file could be opened first, in order", async () => {
  holdLogLines();
  log("waiting for the install script");
  log("phase port: 0 ms");
  keepLogIn(at("start.log"));
  log("phase launch: 3 ms");
  const lines = (await readFile(at("start.log"), "utf8")).trimEnd().split("\n");
  expect(lines.map((line) => line.replace(/^\S+ /, ""))).toEqual([
    "goose-module: waiting for the install script",
    "goose-module: phase port: 0 ms",
    "goose-module: phase launch: 3 ms",
  ]);
});

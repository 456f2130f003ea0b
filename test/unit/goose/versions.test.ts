import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { describeGooseVersion, GOOSE_VERIFIED } from "../../../src/goose/versions.js";

const VERIFIED = ["1.47.0", "1.50.2"];

it.each<[string | null, string]>([
  ["1.47.0", "goose 1.47.0: verified with this module"],
  ["1.50.2", "goose 1.50.2: verified with this module"],
  ["1.54.1", "goose 1.54.1: not verified with this module (verified: 1.47.0, 1.50.2)"],
  ["1.34.0", "goose 1.34.0: not verified with this module (verified: 1.47.0, 1.50.2)"],
  [null, "goose (no version: goose --version failed): not verified with this module (verified: 1.47.0, 1.50.2)"],
])("describeGooseVersion %s", (version, line) => {
  expect(describeGooseVersion(version, VERIFIED)).toBe(line);
});

// One facts file per Goose release checked (test/goose-facts/<version>.json):
// the lists the start log reads and the files the double and tests read name
// the same releases, each as established the same way.
it("GOOSE_VERIFIED names exactly the releases whose facts file says an upstream build ran", () => {
  const dir = path.join(import.meta.dirname, "../../goose-facts");
  const facts = readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), "utf8")) as { version: string; established: string });
  const byWay = (way: string) =>
    facts
      .filter((f) => f.established === way)
      .map((f) => f.version)
      .sort();
  expect(byWay("built")).toEqual([...GOOSE_VERIFIED].sort());
  // Every other facts file was read from source.
  expect(byWay("built").length + byWay("source").length).toBe(facts.length);
});

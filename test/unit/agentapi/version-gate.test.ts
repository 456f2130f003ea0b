import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import {
  gateOnHelp,
  gateOnVersion,
  MIN_PERSISTENCE_VERSION,
  parseVersionOutput,
} from "../../../src/agentapi/version-gate.js";

it("the plan-time check in main.tf asks for the version the start's gate asks for", async () => {
  const mainTf = await readFile(new URL("../../../main.tf", import.meta.url), "utf8");
  expect(/^\s*agentapi_persistence_since\s*=\s*"([^"]+)"/m.exec(mainTf)?.[1]).toBe(MIN_PERSISTENCE_VERSION);
});

it("variables.tf's descriptions, which cannot read a local, name the version the start's gate asks for", async () => {
  const variablesTf = await readFile(new URL("../../../variables.tf", import.meta.url), "utf8");
  const named = [...variablesTf.matchAll(/v(\d+\.\d+\.\d+) or newer/g)].map((match) => match[1]);
  expect(named).toEqual([MIN_PERSISTENCE_VERSION, MIN_PERSISTENCE_VERSION]);
});

it.each([
  ["agentapi version 0.12.1\n", "0.12.1"],
  ["agentapi version v0.12.0", "0.12.0"],
  ["0.11.8", "0.11.8"],
  ["agentapi version 0.12.0-rc.1", "0.12.0-rc.1"],
  ["agentapi version dev", null],
  ["agentapi version 0.12", null],
  ["", null],
  [null, null],
])("parseVersionOutput %j -> %j", (output, expected) => {
  expect(parseVersionOutput(output)).toBe(expected);
});

describe("gateOnVersion", () => {
  it.each([
    ["0.12.0, the first version that has it", "agentapi version 0.12.0", "0.12.0"],
    ["0.12.1", "agentapi version 0.12.1", "0.12.1"],
    ["a v-prefixed version", "agentapi version v0.12.1", "0.12.1"],
  ])("enables persistence for %s", (_, output, version) => {
    expect(gateOnVersion(true, output)).toMatchObject({ kind: "decided", enabled: true, version });
  });

  it.each(["0.11.8", "0.12.0-rc.1"])("disables persistence for %s, with a warning naming it and the fix", (v) => {
    const gate = gateOnVersion(true, `agentapi version ${v}`);
    expect(gate).toMatchObject({ kind: "decided", enabled: false, version: v });
    expect(gate.kind === "decided" && gate.warning).toMatch(
      new RegExp(`${v}.*Remove agentapi_version from the template`),
    );
  });

  it.each([
    ["the version is not semver", "agentapi version custom-build"],
    ["the binary printed nothing or is missing", null],
  ])("asks for a help probe when %s", (_, output) => {
    expect(gateOnVersion(true, output)).toMatchObject({ kind: "probe-help" });
  });

  it("stays off without a warning when persistence is not requested", () => {
    const gate = gateOnVersion(false, "agentapi version 0.12.1");
    expect(gate).toMatchObject({ kind: "decided", enabled: false });
    expect(gate).not.toHaveProperty("warning");
  });
});

describe("gateOnHelp", () => {
  const probe = { kind: "probe-help" as const, version: null, reason: "not semver" };

  const warning = expect.stringContaining("Install AgentAPI 0.12.0 or newer");
  it.each([
    ["server --help offers --state-file", "Flags:\n  -s, --state-file string   Path\n      --pid-file string", {}],
    ["it does not", "Flags:\n  -p, --port int   Port to run the server on", { enabled: false, warning }],
    ["the binary cannot run at all", null, { enabled: false }],
  ])("decides by whether %s", (_, help, want) => {
    expect(gateOnHelp(probe, help)).toMatchObject({ kind: "decided", enabled: true, ...want });
  });
});

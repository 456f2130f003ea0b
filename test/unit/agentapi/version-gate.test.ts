import { describe, expect, it } from "vitest";
import { gateOnHelp, gateOnVersion, parseVersionOutput } from "../../../src/agentapi/version-gate.js";

describe("parseVersionOutput", () => {
  it.each([
    ["agentapi version 0.12.1\n", "0.12.1"],
    ["agentapi version v0.12.0", "0.12.0"],
    ["0.11.8", "0.11.8"],
    ["agentapi version 0.12.0-rc.1", "0.12.0-rc.1"],
    ["agentapi version dev", null],
    ["agentapi version 0.12", null],
    ["", null],
    [null, null],
  ])("%j -> %j", (output, expected) => {
    expect(parseVersionOutput(output)).toBe(expected);
  });
});

describe("gateOnVersion", () => {
  it.each([
    ["0.12.0, the first version that has it", "agentapi version 0.12.0", "0.12.0"],
    ["0.12.1", "agentapi version 0.12.1", "0.12.1"],
    ["a v-prefixed version", "agentapi version v0.12.1", "0.12.1"],
  ])("enables persistence for %s", (_, output, version) => {
    expect(gateOnVersion(true, output)).toMatchObject({ kind: "decided", enabled: true, version });
  });

  it("disables persistence for 0.11.8 with one warning that names the version and the fix", () => {
    const gate = gateOnVersion(true, "agentapi version 0.11.8");
    expect(gate).toMatchObject({ kind: "decided", enabled: false, version: "0.11.8" });
    if (gate.kind !== "decided") throw new Error("expected a decision");
    expect(gate.warning).toContain("0.11.8");
    expect(gate.warning).toContain("Remove agentapi_version from the template");
  });

  it("treats a pre-release of 0.12.0 as older than 0.12.0", () => {
    expect(gateOnVersion(true, "agentapi version 0.12.0-rc.1")).toMatchObject({ enabled: false });
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

  it("enables persistence when server --help offers --state-file", () => {
    const help =
      "Flags:\n  -s, --state-file string   Path to file for saving/loading server state\n      --pid-file string";
    expect(gateOnHelp(probe, help)).toMatchObject({ kind: "decided", enabled: true });
  });

  it("disables persistence with a warning when it does not", () => {
    const gate = gateOnHelp(probe, "Flags:\n  -p, --port int   Port to run the server on");
    expect(gate).toMatchObject({ kind: "decided", enabled: false });
    expect(gate.kind === "decided" && gate.warning).toContain("Install AgentAPI 0.12.0 or newer");
  });

  it("disables persistence when the binary cannot run at all", () => {
    expect(gateOnHelp(probe, null)).toMatchObject({ kind: "decided", enabled: false });
  });
});

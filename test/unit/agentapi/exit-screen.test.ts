import { describe, expect, it } from "vitest";
import { lastAgentScreen } from "../../../src/agentapi/exit-screen.js";
import { cleanLaunch, failedLaunch } from "./agentapi-logs.js";

describe("lastAgentScreen", () => {
  it("finds what the agent showed when it exited with an error", () => {
    expect(lastAgentScreen(`\n${failedLaunch}`)).toBe("error: Invalid API key for provider anthropic (HTTP 401)");
  });

  it("only in the last launch: an earlier launch's error is not this one's", () => {
    expect(lastAgentScreen(`\n${failedLaunch}\n${cleanLaunch}`)).toBeNull();
  });

  it("keeps the end of a long screen, on one line", () => {
    const long = failedLaunch.replace("    error: Invalid", `${"    banner line\n".repeat(40)}    error: Invalid`);
    const screen = lastAgentScreen(`\n${long}`, 80) as string;
    expect(screen).toHaveLength(80);
    expect(screen.startsWith("…")).toBe(true);
    expect(screen.endsWith("error: Invalid API key for provider anthropic (HTTP 401)")).toBe(true);
  });

  it("null for a log without such an exit, and for an empty log", () => {
    expect(lastAgentScreen(cleanLaunch)).toBeNull();
    expect(lastAgentScreen("")).toBeNull();
  });
});

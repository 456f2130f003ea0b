import { describe, expect, it } from "vitest";
import { agentSignals } from "../../../support/workspace/signals.js";

// Lines as stop scripts printed them in integration runs under load.
const GRACEFUL = [
  "goose-module: running the stop script with /usr/bin/node",
  "goose-module: supervisor (PID 24926) stood down",
  "goose-module: Goose exited on /exit, and AgentAPI with it",
  "goose-module: stop finished in 195 ms",
];
const SUPERVISOR_KILLED =
  "goose-module: warning: the supervisor (PID 6226) did not stand down within 2000 ms of SIGTERM; sent SIGKILL to it and its helpers";
const TERM = "goose-module: Goose is not idle at its prompt; sending SIGTERM";
const TERM_DONE = "goose-module: AgentAPI exited after SIGTERM";
const KILL =
  "goose-module: warning: AgentAPI did not exit within 10000 ms of SIGTERM; sent SIGKILL to it and to 1 agent process group(s)";

describe("agentSignals: what a stop did to AgentAPI and Goose", () => {
  it.each([
    { what: "a graceful stop", lines: GRACEFUL, signals: [] },
    { what: "the supervisor's stand-down fallback alone", lines: [...GRACEFUL, SUPERVISOR_KILLED], signals: [] },
    { what: "SIGTERM to AgentAPI", lines: [...GRACEFUL, TERM, TERM_DONE], signals: [TERM, TERM_DONE] },
    { what: "SIGKILL to AgentAPI", lines: [SUPERVISOR_KILLED, TERM, KILL], signals: [TERM, KILL] },
  ])("$what", ({ lines, signals }) => {
    expect(agentSignals(lines.join("\n"))).toEqual(signals);
  });
});

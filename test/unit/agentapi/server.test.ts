import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { AGENTAPI_DEFAULT_PORT, findRunningAgentapi, isAgentapiServer } from "../../../src/agentapi/server.js";
import { exitedPid, liveChildren } from "../children.js";
import { scratchDir } from "../scratch.js";

const at = scratchDir("agentapi-server-test");
const start = liveChildren();

it.each([
  ["agentapi server on the expected port", "/m/bin/agentapi server --type goose --port 4000 -- goose", 4000, true],
  ["another port", "/m/bin/agentapi server --port 4001", 4000, false],
  ["another program", "sleep 1000", 4000, false],
  ["another program's argument", "/usr/bin/python3 agentapi server", 4000, false],
  ["the word server after --", "agentapi attach -- server", AGENTAPI_DEFAULT_PORT, false],
  ["AgentAPI's default port when none is given", "agentapi server -- goose", AGENTAPI_DEFAULT_PORT, true],
] as const)("isAgentapiServer %s: %s", (_, argv, port, is) => {
  expect(isAgentapiServer(argv.split(" "), port)).toBe(is);
});

describe("findRunningAgentapi", () => {
  it("reports a missing or unreadable PID file as no file", async () => {
    const none = { status: "no-file", pid: null };
    expect(await findRunningAgentapi(at("missing.pid"), 4000)).toEqual(none);
    await writeFile(at("garbage.pid"), "not a pid\n");
    expect(await findRunningAgentapi(at("garbage.pid"), 4000)).toEqual(none);
  });

  it("tells a gone process, another program and an agentapi server on another port from ours", async () => {
    const file = at("agentapi.pid");
    const gone = await exitedPid();
    await writeFile(file, `${gone}\n`);
    expect(await findRunningAgentapi(file, 4000)).toEqual({ status: "dead", pid: gone });

    await writeFile(file, `${process.pid}\n`);
    expect(await findRunningAgentapi(file, 4000)).toEqual({ status: "foreign", pid: process.pid });

    // A stand-in whose command line reads like `agentapi server --port 4000`.
    const args = ["-e", "setInterval(() => {}, 1 << 30)", "server", "--port", "4000"];
    const server = await start(process.execPath, args, "/opt/agentapi");
    await writeFile(file, `${server}\n`);
    expect(await findRunningAgentapi(file, 4000)).toEqual({ status: "running", pid: server });
    expect(await findRunningAgentapi(file, 4001)).toEqual({ status: "foreign", pid: server });
  });
});

import { describe, expect, it } from "vitest";
import { buildAgentapiArgs } from "../../../src/agentapi/command.js";

describe("buildAgentapiArgs", () => {
  const agent = { type: "goose", agent: "/bin/goose", agentArgs: ["session"] };

  it("passes the agent's type, the port and the state files before --", () => {
    const persistence = { stateFile: "/s.json", pidFile: "/a.pid" };
    expect(buildAgentapiArgs({ port: 4000, persistence, ...agent })).toEqual(
      "server --type goose --port 4000 --state-file /s.json --pid-file /a.pid -- /bin/goose session".split(" "),
    );
  });

  it("leaves the state flags out without persistence (older AgentAPI rejects them)", () => {
    const args = buildAgentapiArgs({ port: 3284, persistence: null, ...agent });
    expect(args).toEqual("server --type goose --port 3284 -- /bin/goose session".split(" "));
  });

  it("with a firewall puts the firewall's command between AgentAPI's -- and the agent, so only the agent runs inside it", () => {
    const prefix = ["/fw/wrapper.sh", "--config=/fw/c.yaml", "--"];
    const args = buildAgentapiArgs({ port: 4000, persistence: null, ...agent, prefix });
    expect(args).toEqual([..."server --type goose --port 4000 --".split(" "), ...prefix, "/bin/goose", "session"]);
  });
});

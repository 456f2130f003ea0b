// The Coder CLI stand-in (support/coder-cli/coder) as the module's Goose runs
// it: `coder exp mcp server` found on the workspace's PATH, spoken to over
// stdio. The expected tool is upstream's, not the stand-in's: coder_report_task
// as codersdk/toolsdk/toolsdk.go (github.com/coder/coder at 00b02495) defines it.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { coderCliStandinDir, run, Workspace } from "../../support/workspace/index.js";

const CODER = path.join(coderCliStandinDir, "coder");

function lines(...requests: object[]): string {
  return requests.map((r) => `${JSON.stringify({ jsonrpc: "2.0", ...r })}\n`).join("");
}

function answers(stdout: string): Array<Record<string, any>> {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

describe("Coder CLI stand-in", () => {
  it("is the `coder` a workspace's scripts and Goose find on PATH", async () => {
    const ws = await Workspace.create();
    const found = await run("/bin/sh", ["-c", "command -v coder"], { env: ws.env() });
    expect(found.stdout.trim()).toBe(CODER);
  });

  it("serves coder_report_task over MCP stdio, answers ping, refuses other methods, and ends at EOF", async () => {
    const result = await run(CODER, ["exp", "mcp", "server"], {
      env: { PATH: process.env.PATH, CODER_MCP_APP_STATUS_SLUG: "goose" },
      input: lines(
        {
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "test", version: "0" } },
        },
        { method: "notifications/initialized" },
        { id: 2, method: "tools/list" },
        {
          id: 3,
          method: "tools/call",
          params: { name: "coder_report_task", arguments: { summary: "Reading the code", link: "", state: "working" } },
        },
        { id: 4, method: "ping" },
        { id: "five", method: "resources/list" },
      ),
      timeoutMs: 20_000,
    });
    expect(result.code).toBe(0);
    const [init, list, call, ping, unknown, ...rest] = answers(result.stdout);
    expect(rest).toEqual([]);
    expect(init).toMatchObject({
      id: 1,
      result: { protocolVersion: "2025-03-26", serverInfo: { name: "Coder Agent" }, capabilities: { tools: {} } },
    });
    expect(list.id).toBe(2);
    expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(["coder_report_task"]);
    const schema = list.result.tools[0].inputSchema;
    expect(schema.type).toBe("object");
    expect([...schema.required].sort()).toEqual(["link", "state", "summary"]);
    expect(schema.properties.state.enum).toEqual(["working", "complete", "failure"]);
    expect(schema.properties.summary.type).toBe("string");
    expect(schema.properties.link.type).toBe("string");
    expect(call.id).toBe(3);
    expect(JSON.parse(call.result.content[0].text)).toEqual({ message: "Thanks for reporting!" });
    expect(ping).toEqual({ jsonrpc: "2.0", id: 4, result: {} });
    expect(unknown).toMatchObject({ id: "five", error: { code: -32601 } });
  });

  it("says it is a stand-in and fails for any other subcommand", async () => {
    const result = await run(CODER, ["login", "https://coder.example.com"], { env: { PATH: process.env.PATH } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("stand-in");
    expect(result.stdout).toBe("");
  });
});

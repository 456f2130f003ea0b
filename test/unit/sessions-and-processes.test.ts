import { describe, expect, it } from "vitest";
import { findNamedSession, gooseSessionsDb, sessionQuery } from "../../src/goose-sessions.js";
import { isAgentapiServer, parsePid } from "../../src/process-info.js";
import { expandHome, resolvePaths } from "../../src/config.js";
import { agentapiAsset, agentapiDownloadUrl } from "../../src/install.js";

const session = (over: Record<string, unknown>) => ({ id: "20261122_1", name: "task-1", session_type: "user", message_count: 2, working_dir: "/home/coder", updated_at: "2026-11-22T10:00:00Z", ...over });

describe("findNamedSession", () => {
  it("finds an exact name match with its message count", () => {
    expect(findNamedSession(JSON.stringify([session({})]), "task-1")).toMatchObject({ kind: "found", id: "20261122_1", messages: 2 });
  });

  it("matches the id too, as goose --resume --name does", () => {
    expect(findNamedSession(JSON.stringify([session({ name: "other" })]), "20261122_1")).toMatchObject({ kind: "found" });
  });

  it("does not match a name that merely contains the wanted one", () => {
    expect(findNamedSession(JSON.stringify([session({ name: "task-10" })]), "task-1")).toEqual({ kind: "absent", source: "goose session list" });
  });

  it("ignores sessions goose would not resume (sub-agents, hidden)", () => {
    expect(findNamedSession(JSON.stringify([session({ session_type: "sub_agent" })]), "task-1").kind).toBe("absent");
  });

  it("picks the most recently active of two sessions with the same name", () => {
    const list = [session({ id: "a", message_count: 0, updated_at: "2026-11-22T09:00:00Z" }), session({ id: "b", message_count: 4, updated_at: "2026-11-22T11:00:00Z" })];
    expect(findNamedSession(JSON.stringify(list), "task-1")).toMatchObject({ id: "b", messages: 4 });
  });

  it("reads Goose 1.10-1.11 lists, which name sessions in description", () => {
    const old = { id: "20251010_1", description: "task-1", message_count: 3, updated_at: "x" };
    expect(findNamedSession(JSON.stringify([old]), "task-1")).toMatchObject({ kind: "found", messages: 3 });
  });

  it("treats empty output as no sessions and rejects non-lists", () => {
    expect(findNamedSession("", "task-1").kind).toBe("absent");
    expect(() => findNamedSession('{"error":"x"}', "task-1")).toThrow();
    expect(() => findNamedSession("No sessions found", "task-1")).toThrow();
  });
});

describe("gooseSessionsDb", () => {
  it("follows GOOSE_PATH_ROOT, XDG_DATA_HOME, then the default", () => {
    expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "/g" }, "/h")).toBe("/g/data/sessions/sessions.db");
    expect(gooseSessionsDb({ GOOSE_PATH_ROOT: "relative", XDG_DATA_HOME: "/x" }, "/h")).toBe("/x/goose/sessions/sessions.db");
    expect(gooseSessionsDb({}, "/h")).toBe("/h/.local/share/goose/sessions/sessions.db");
  });
});

describe("sessionQuery", () => {
  it("carries the name as hex, so quotes cannot end the SQL string", () => {
    const sql = sessionQuery("x' OR 1=1; --");
    expect(sql).not.toContain("OR 1=1");
    expect(sql).toContain(Buffer.from("x' OR 1=1; --").toString("hex"));
  });
});

describe("isAgentapiServer", () => {
  it("recognises agentapi server on the expected port", () => {
    expect(isAgentapiServer(["/m/bin/agentapi", "server", "--type", "goose", "--port", "4000", "--", "goose"], 4000)).toBe(true);
  });

  it("rejects another port, another program, or the word server after --", () => {
    expect(isAgentapiServer(["/m/bin/agentapi", "server", "--port", "4001"], 4000)).toBe(false);
    expect(isAgentapiServer(["sleep", "1000"], 4000)).toBe(false);
    expect(isAgentapiServer(["/usr/bin/python3", "agentapi", "server"], 4000)).toBe(false);
    expect(isAgentapiServer(["agentapi", "attach", "--", "server"], 3284)).toBe(false);
  });

  it("assumes AgentAPI's default port when none is given", () => {
    expect(isAgentapiServer(["agentapi", "server", "--", "goose"], 3284)).toBe(true);
  });
});

describe("parsePid", () => {
  it.each([
    ["1234\n", 1234],
    ["abc", null],
    ["", null],
    ["1", null],
    ["12 34", null],
  ])("%j -> %j", (text, pid) => expect(parsePid(text)).toBe(pid));
});

describe("paths", () => {
  it("expands the $HOME prefix Terraform uses for defaults", () => {
    expect(expandHome("$HOME/.coder-modules/coder/goose/agentapi.pid", "/home/u")).toBe("/home/u/.coder-modules/coder/goose/agentapi.pid");
    expect(expandHome("/var/x", "/home/u")).toBe("/var/x");
  });

  it("puts every runtime file under the module folder by default", () => {
    const paths = resolvePaths("/home/u", ".coder-modules/coder/goose", { state_file: "", pid_file: "" });
    expect(paths.stateFile).toBe("/home/u/.coder-modules/coder/goose/agentapi-state.json");
    expect(paths.pidFile).toBe("/home/u/.coder-modules/coder/goose/agentapi.pid");
    expect(paths.logs).toBe("/home/u/.coder-modules/coder/goose/logs");
  });
});

describe("agentapi download", () => {
  it("names the release asset for each architecture", () => {
    expect(agentapiDownloadUrl("https://m/agentapi/", "v0.12.1", "x64")).toBe("https://m/agentapi/v0.12.1/agentapi-linux-amd64");
    expect(agentapiAsset("arm64")).toBe("agentapi-linux-arm64");
    expect(() => agentapiAsset("ia32")).toThrow(/install_agentapi = false/);
  });
});

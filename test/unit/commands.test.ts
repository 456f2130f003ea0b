import { describe, expect, it } from "vitest";
import { buildAgentapiArgs, buildGooseArgs, buildLaunchEnv, withUserTmpdir } from "../../src/commands.js";

describe("buildGooseArgs", () => {
  it("cold start with a prompt creates the named session and hands it the prompt file", () => {
    expect(buildGooseArgs("cold", "task-1", "/m/task-prompt.md")).toEqual([
      "run",
      "--interactive",
      "--name",
      "task-1",
      "--instructions",
      "/m/task-prompt.md",
    ]);
  });

  it("cold start without a prompt opens a new named session and sends nothing", () => {
    expect(buildGooseArgs("cold", "task-1", null)).toEqual(["session", "--name", "task-1"]);
  });

  it("warm start resumes by name, reprints the earlier conversation, and never carries a prompt", () => {
    expect(buildGooseArgs("warm", "task-1", "/m/task-prompt.md")).toEqual([
      "session",
      "--resume",
      "--name",
      "task-1",
      "--history",
    ]);
  });

  it("warm start that carries on an interrupted turn resumes with one continuation text, never the prompt", () => {
    const args = buildGooseArgs("warm", "task-1", "/m/task-prompt.md", true);
    expect(args.slice(0, 6)).toEqual(["run", "--resume", "--name", "task-1", "--interactive", "--text"]);
    expect(args).toHaveLength(7);
    expect(args).not.toContain("/m/task-prompt.md");
    expect(args[6]).toMatch(/carry on/);
  });

  it("a cold start never carries a continuation", () => {
    expect(buildGooseArgs("cold", "task-1", null, true)).toEqual(["session", "--name", "task-1"]);
  });

  it("keeps a hostile session name as one argument", () => {
    const name = "a'; rm -rf / #";
    expect(buildGooseArgs("warm", name, null)).toContain(name);
  });
});

describe("buildAgentapiArgs", () => {
  it("passes --type goose, the port and the state files before --", () => {
    const args = buildAgentapiArgs({
      port: 4000,
      persistence: { stateFile: "/s.json", pidFile: "/a.pid" },
      goose: "/bin/goose",
      gooseArgs: ["session"],
    });
    expect(args).toEqual([
      "server",
      "--type",
      "goose",
      "--port",
      "4000",
      "--state-file",
      "/s.json",
      "--pid-file",
      "/a.pid",
      "--",
      "/bin/goose",
      "session",
    ]);
  });

  it("leaves the state flags out without persistence (older AgentAPI rejects them)", () => {
    const args = buildAgentapiArgs({ port: 3284, persistence: null, goose: "goose", gooseArgs: [] });
    expect(args).not.toContain("--state-file");
    expect(args).not.toContain("--pid-file");
  });
});

describe("buildLaunchEnv", () => {
  const base = {
    PATH: "/usr/bin",
    HOME: "/home/coder",
    AGENTAPI_STATE_FILE: "/stale.json",
    AGENTAPI_ALLOWED_HOSTS: "*",
    ANTHROPIC_API_KEY: "k",
  };
  const opts = {
    chatBasePath: "",
    persistence: null,
    allowedHosts: ["localhost", "127.0.0.1", "[::1]", "coder.example.com"],
    allowedOrigins: ["http://localhost:3284", "https://coder.example.com"],
    provider: "openai",
    model: "gpt",
    mode: "auto" as const,
    pathPrefix: [],
    configLayer: "/m/goose-config.json",
  };

  it("keeps the registry's AGENTAPI_* contract when persistence is on", () => {
    const env = buildLaunchEnv(base, {
      ...opts,
      chatBasePath: "/@u/w.a/apps/goose/chat",
      persistence: { stateFile: "/s.json", pidFile: "/a.pid" },
      pathPrefix: ["/m/bin"],
    });
    expect(env).toMatchObject({
      AGENTAPI_STATE_FILE: "/s.json",
      AGENTAPI_PID_FILE: "/a.pid",
      AGENTAPI_SAVE_STATE: "true",
      AGENTAPI_LOAD_STATE: "true",
      AGENTAPI_CHAT_BASE_PATH: "/@u/w.a/apps/goose/chat",
      PATH: "/m/bin:/usr/bin",
      ANTHROPIC_API_KEY: "k",
    });
  });

  it("drops inherited AGENTAPI_* state variables when persistence is off", () => {
    const env = buildLaunchEnv(base, opts);
    expect(env.AGENTAPI_STATE_FILE).toBeUndefined();
    expect(env.AGENTAPI_CHAT_BASE_PATH).toBeUndefined();
  });

  it("passes the allow-lists space-separated, the way AgentAPI reads them from its environment, never an inherited *", () => {
    const env = buildLaunchEnv(base, opts);
    expect(env.AGENTAPI_ALLOWED_HOSTS).toBe("localhost 127.0.0.1 [::1] coder.example.com");
    expect(env.AGENTAPI_ALLOWED_ORIGINS).toBe("http://localhost:3284 https://coder.example.com");
  });

  it("sets what keeps Goose from stopping to ask under a terminal, and the template's mode", () => {
    expect(buildLaunchEnv(base, opts)).toMatchObject({
      GOOSE_PROVIDER: "openai",
      GOOSE_MODEL: "gpt",
      GOOSE_MODE: "auto",
      GOOSE_TELEMETRY_ENABLED: "false",
      GOOSE_DISABLE_KEYRING: "1",
    });
    expect(buildLaunchEnv({ ...base, GOOSE_MODE: "approve" }, { ...opts, mode: "smart_approve" }).GOOSE_MODE).toBe(
      "smart_approve",
    );
  });

  it("names the module's config layer first, before a list the user set, whose files then win", () => {
    expect(buildLaunchEnv(base, opts).GOOSE_ADDITIONAL_CONFIG_FILES).toBe("/m/goose-config.json");
    const own = { ...base, GOOSE_ADDITIONAL_CONFIG_FILES: "/u/a.yaml:/u/b.yaml" };
    expect(buildLaunchEnv(own, opts).GOOSE_ADDITIONAL_CONFIG_FILES).toBe("/m/goose-config.json:/u/a.yaml:/u/b.yaml");
  });
});

describe("TMPDIR: the module's for AgentAPI, the user's for what it starts", () => {
  it("buildLaunchEnv sets the module's TMPDIR only when given one", () => {
    const base = { PATH: "/usr/bin", TMPDIR: "/user/tmp" };
    const opts = {
      chatBasePath: "",
      persistence: null,
      allowedHosts: [],
      allowedOrigins: [],
      provider: "openai",
      model: "gpt",
      mode: "auto" as const,
      pathPrefix: [],
      configLayer: "/m/goose-config.json",
    };
    expect(buildLaunchEnv(base, { ...opts, tmpdir: "/m/tmp" }).TMPDIR).toBe("/m/tmp");
    expect(buildLaunchEnv(base, opts).TMPDIR).toBe("/user/tmp");
  });

  it.each([
    ["the user's TMPDIR back", [], "/bin/goose", "/user/tmp", ["env", "TMPDIR=/user/tmp"]],
    ["no TMPDIR when the user had none", [], "/bin/goose", undefined, ["env", "-u", "TMPDIR"]],
    [
      "before the firewall's prefix, as one word whatever it holds",
      ["/fw/run", "--"],
      "/bin/goose",
      "/t m p/$(x)\n=;'",
      ["env", "TMPDIR=/t m p/$(x)\n=;'", "/fw/run", "--"],
    ],
    ["an empty TMPDIR stays empty", [], "/bin/goose", "", ["env", "TMPDIR="]],
    ["no wrapper when env would read the command as a setting", [], "/a=b/goose", "/user/tmp", []],
    ["nor when the prefix's command holds =", ["/x=y/fw"], "/bin/goose", "/user/tmp", ["/x=y/fw"]],
  ] as Array<[string, string[], string, string | undefined, string[]]>)(
    "%s",
    (_name, prefix, goose, user, expected) => {
      expect(withUserTmpdir(prefix, goose, user)).toEqual(expected);
    },
  );
});

import { describe, expect, it } from "vitest";
import { buildGooseArgs, buildLaunchEnv, withUserTmpdir } from "../../../src/goose/commands.js";

const PROMPT = "/m/task-prompt.md";

describe("buildGooseArgs", () => {
  const NEW = ["session", "--name", "task-1"];
  const WITH_PROMPT = ["run", "--interactive", "--name", "task-1", "--instructions", PROMPT];
  const cold = { mode: "cold", name: "task-1" } as const;
  const warm = { mode: "warm", id: "20261122_3" } as const;
  it.each([
    ["cold with a prompt: a named session given the prompt file", cold, PROMPT, false, WITH_PROMPT],
    ["cold without a prompt: a new named session, sends nothing", cold, null, false, NEW],
    [
      "warm: resumes the decided session by its id, reprints the history, never a prompt",
      warm,
      PROMPT,
      false,
      ["session", "--resume", "--session-id", "20261122_3", "--history"],
    ],
    ["cold never carries a continuation", cold, null, true, NEW],
  ] as const)("%s", (_name, session, prompt, carryOn, want) => {
    expect(buildGooseArgs(session, prompt, carryOn)).toEqual(want);
  });

  it("warm, carrying on an interrupted turn: resumes by id with one continuation text, never the prompt", () => {
    const text = expect.stringMatching(/carry on/);
    expect(buildGooseArgs(warm, PROMPT, true)).toEqual([
      ..."run --resume --session-id 20261122_3 --interactive --text".split(" "),
      text,
    ]);
  });

  it("keeps a hostile session name as one argument", () => {
    expect(buildGooseArgs({ mode: "cold", name: "a'; rm -rf / #" }, null)).toContain("a'; rm -rf / #");
  });
});

describe("buildLaunchEnv", () => {
  const base = { PATH: "/usr/bin", HOME: "/h", AGENTAPI_STATE_FILE: "/stale.json", AGENTAPI_ALLOWED_HOSTS: "*" };
  const env = { ...base, ANTHROPIC_API_KEY: "k" };
  const opts = {
    ...{ chatBasePath: "", provider: "openai", model: "gpt", mode: "auto" as const, pathPrefix: [] },
    allowedHosts: ["localhost", "127.0.0.1", "[::1]", "coder.example.com"],
    allowedOrigins: ["http://localhost:3284", "https://coder.example.com"],
    configLayer: "/m/goose-config.json",
  };

  it("names the module's config layer first, before a list the user set (additionalConfigFiles' table has the rest)", () => {
    const own = { ...base, GOOSE_ADDITIONAL_CONFIG_FILES: "/u/a.yaml:/u/b.yaml" };
    expect(buildLaunchEnv(own, opts).GOOSE_ADDITIONAL_CONFIG_FILES).toBe("/m/goose-config.json:/u/a.yaml:/u/b.yaml");
  });

  it("sets the chat's base path and PATH, and keeps the template's provider variables", () => {
    const chat = "/@u/w.a/apps/goose/chat";
    expect(buildLaunchEnv(env, { ...opts, chatBasePath: chat, pathPrefix: ["/m/bin"] })).toMatchObject({
      ...{ AGENTAPI_CHAT_BASE_PATH: chat, PATH: "/m/bin:/usr/bin", ANTHROPIC_API_KEY: "k" },
    });
  });

  it("names no state file: the state and PID files reach AgentAPI as flags alone, and an inherited one is dropped", () => {
    const got = buildLaunchEnv(env, opts);
    expect(
      Object.keys(got).filter((name) => /^AGENTAPI_(STATE_FILE|PID_FILE|SAVE_STATE|LOAD_STATE)$/.test(name)),
    ).toEqual([]);
    expect(got.AGENTAPI_CHAT_BASE_PATH).toBeUndefined();
  });

  it("passes the allow-lists space-separated, as AgentAPI reads them, never an inherited *", () => {
    const got = buildLaunchEnv(env, opts);
    expect(got.AGENTAPI_ALLOWED_HOSTS).toBe("localhost 127.0.0.1 [::1] coder.example.com");
    expect(got.AGENTAPI_ALLOWED_ORIGINS).toBe("http://localhost:3284 https://coder.example.com");
  });

  it("sets what keeps Goose from stopping to ask under a terminal, and the template's mode", () => {
    expect(buildLaunchEnv(env, opts)).toMatchObject({
      ...{ GOOSE_PROVIDER: "openai", GOOSE_MODEL: "gpt", GOOSE_MODE: "auto" },
      ...{ GOOSE_TELEMETRY_ENABLED: "false", GOOSE_DISABLE_KEYRING: "1" },
    });
    const approve = buildLaunchEnv({ ...env, GOOSE_MODE: "approve" }, { ...opts, mode: "smart_approve" });
    expect(approve.GOOSE_MODE).toBe("smart_approve");
  });

  it("sets the module's TMPDIR only when given one", () => {
    const user = { PATH: "/usr/bin", TMPDIR: "/user/tmp" };
    const bare = { ...opts, allowedHosts: [], allowedOrigins: [] };
    expect(buildLaunchEnv(user, { ...bare, tmpdir: "/m/tmp" }).TMPDIR).toBe("/m/tmp");
    expect(buildLaunchEnv(user, bare).TMPDIR).toBe("/user/tmp");
  });
});

// TMPDIR: the module's for AgentAPI, the user's for what it starts.
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
  "withUserTmpdir: %s",
  (_, prefix, goose, user, want) => {
    expect(withUserTmpdir(prefix, goose, user)).toEqual(want);
  },
);

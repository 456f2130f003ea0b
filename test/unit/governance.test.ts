import { describe, expect, it } from "vitest";
import { buildAgentapiArgs, buildLaunchEnv } from "../../src/commands.js";
import { expandHome, gatewayEnv } from "../../src/governance.js";
import { StepError } from "../../src/log.js";

const TOKEN_ENV = "CODER_GOOSE_AI_GATEWAY_TOKEN";
const on = (base_url: string) => ({ enabled: true, base_url, token_env: TOKEN_ENV });

describe("gatewayEnv", () => {
  it("is nothing when the gateway is off, whatever the environment holds", () => {
    expect(gatewayEnv("anthropic", { ...on(""), enabled: false }, { [TOKEN_ENV]: "t" })).toBeNull();
  });

  it.each([
    [
      "anthropic",
      "https://coder.example.com/api/v2/aibridge/anthropic",
      {
        ANTHROPIC_HOST: "https://coder.example.com/api/v2/aibridge/anthropic",
        ANTHROPIC_API_KEY: "session-token",
      },
    ],
    [
      "openai",
      "https://coder.example.com/api/v2/aibridge/openai",
      {
        OPENAI_HOST: "https://coder.example.com/api/v2/aibridge/openai",
        OPENAI_BASE_PATH: "v1/chat/completions",
        OPENAI_API_KEY: "session-token",
      },
    ],
  ])("points %s at the gateway with the session token as its key", (provider, url, want) => {
    expect(gatewayEnv(provider, on(url), { [TOKEN_ENV]: "session-token" })).toEqual(want);
  });

  it.each([undefined, "", "  "])("fails, naming the variable and never a value, when the token is %j", (token) => {
    const env = token === undefined ? {} : { [TOKEN_ENV]: token };
    expect(() => gatewayEnv("openai", on("https://c/api/v2/aibridge/openai"), env)).toThrow(StepError);
    expect(() => gatewayEnv("openai", on("https://c/api/v2/aibridge/openai"), env)).toThrow(TOKEN_ENV);
  });

  it("refuses a provider the gateway does not serve, naming the two it does", () => {
    expect(() => gatewayEnv("databricks", on("https://c/x"), { [TOKEN_ENV]: "t" })).toThrow(/"anthropic" or "openai"/);
  });
});

describe("buildLaunchEnv with the gateway", () => {
  const base = {
    chatBasePath: "",
    persistence: null,
    allowedHosts: ["localhost"],
    allowedOrigins: [],
    provider: "anthropic",
    model: "m",
    mode: "auto" as const,
    pathPrefix: [],
    configLayer: "/m/goose-config.json",
  };

  it("replaces the template's own key and host, so the gateway wins", () => {
    const env = buildLaunchEnv(
      { PATH: "/bin", ANTHROPIC_API_KEY: "sk-template", ANTHROPIC_HOST: "https://api.anthropic.com" },
      { ...base, gateway: { ANTHROPIC_HOST: "https://c/api/v2/aibridge/anthropic", ANTHROPIC_API_KEY: "tok" } },
    );
    expect(env.ANTHROPIC_API_KEY).toBe("tok");
    expect(env.ANTHROPIC_HOST).toBe("https://c/api/v2/aibridge/anthropic");
  });

  it("leaves the template's provider variables alone without the gateway", () => {
    const env = buildLaunchEnv({ PATH: "/bin", ANTHROPIC_API_KEY: "sk-template" }, { ...base, gateway: null });
    expect(env.ANTHROPIC_API_KEY).toBe("sk-template");
    expect(env.ANTHROPIC_HOST).toBeUndefined();
  });
});

describe("expandHome", () => {
  it("expands the agent-firewall module's $HOME paths, as a shell would", () => {
    expect(
      expandHome(
        [
          "$HOME/.coder-modules/coder/agent-firewall/scripts/agent-firewall-wrapper.sh",
          "--config=$HOME/.coder-modules/coder/agent-firewall/config/config.yaml",
          "--",
        ],
        "/home/u",
      ),
    ).toEqual([
      "/home/u/.coder-modules/coder/agent-firewall/scripts/agent-firewall-wrapper.sh",
      "--config=/home/u/.coder-modules/coder/agent-firewall/config/config.yaml",
      "--",
    ]);
  });

  it("expands ${HOME} and leaves other variables and longer names alone", () => {
    expect(expandHome(["${HOME}/fw", "$HOMEDIR/x", "$USER", "a$HOME"], "/h")).toEqual([
      "/h/fw",
      "$HOMEDIR/x",
      "$USER",
      "a/h",
    ]);
  });

  it("takes the home folder literally, even with $ patterns in it", () => {
    expect(expandHome(["$HOME/w"], "/home/a$&b")).toEqual(["/home/a$&b/w"]);
  });
});

describe("buildAgentapiArgs with a firewall", () => {
  it("puts the firewall's command between AgentAPI's -- and Goose, so only Goose runs inside it", () => {
    const args = buildAgentapiArgs({
      port: 4000,
      persistence: null,
      goose: "/bin/goose",
      gooseArgs: ["session"],
      prefix: ["/fw/wrapper.sh", "--config=/fw/c.yaml", "--"],
    });
    expect(args.slice(args.indexOf("--"))).toEqual([
      "--",
      "/fw/wrapper.sh",
      "--config=/fw/c.yaml",
      "--",
      "/bin/goose",
      "session",
    ]);
    expect(args.slice(0, args.indexOf("--"))).toEqual(["server", "--type", "goose", "--port", "4000"]);
  });
});

import { describe, expect, it } from "vitest";
import { buildLaunchEnv } from "../../../src/goose/commands.js";
import { expandHome, gatewayEnv } from "../../../src/goose/governance.js";
import { StepError } from "../../../src/lib/log.js";

const TOKEN_ENV = "CODER_GOOSE_AI_GATEWAY_TOKEN";
const on = (baseUrl: string) => ({ enabled: true, baseUrl, tokenEnv: TOKEN_ENV });

describe("gatewayEnv", () => {
  it("is nothing when the gateway is off, whatever the environment holds", () => {
    expect(gatewayEnv("anthropic", { ...on(""), enabled: false }, { [TOKEN_ENV]: "t" })).toBeNull();
  });

  const BRIDGE = "https://coder.example.com/api/v2/aibridge";
  it.each([
    ["anthropic", { ANTHROPIC_HOST: `${BRIDGE}/anthropic`, ANTHROPIC_API_KEY: "session-token" }],
    [
      "openai",
      { OPENAI_HOST: `${BRIDGE}/openai`, OPENAI_BASE_PATH: "v1/chat/completions", OPENAI_API_KEY: "session-token" },
    ],
  ])("points %s at the gateway with the session token as its key", (provider, want) => {
    expect(gatewayEnv(provider, on(`${BRIDGE}/${provider}`), { [TOKEN_ENV]: "session-token" })).toEqual(want);
  });

  it.each([undefined, "", "  "])("fails, naming the variable and never a value, when the token is %j", (token) => {
    const env = token === undefined ? {} : { [TOKEN_ENV]: token };
    const call = () => gatewayEnv("openai", on("https://c/api/v2/aibridge/openai"), env);
    expect(call).toThrow(StepError);
    expect(call).toThrow(TOKEN_ENV);
  });

  it("refuses a provider the gateway does not serve, naming the two it does", () => {
    expect(() => gatewayEnv("databricks", on("https://c/x"), { [TOKEN_ENV]: "t" })).toThrow(/"anthropic" or "openai"/);
  });
});

describe("buildLaunchEnv with the gateway", () => {
  const base = { chatBasePath: "", allowedHosts: ["localhost"], allowedOrigins: [], pathPrefix: [] };
  const opts = { ...base, configLayer: "/m/c.json", provider: "anthropic", model: "m", mode: "auto" as const };
  const gateway = { ANTHROPIC_HOST: "https://c/api/v2/aibridge/anthropic", ANTHROPIC_API_KEY: "tok" };

  it.each([
    ["replaces the template's own key and host, so the gateway wins", gateway, gateway],
    [
      "leaves the template's provider variables alone without it",
      null,
      { ANTHROPIC_API_KEY: "sk-t", ANTHROPIC_HOST: "h" },
    ],
  ])("%s", (_, gateway, want) => {
    const env = buildLaunchEnv({ PATH: "/bin", ANTHROPIC_API_KEY: "sk-t", ANTHROPIC_HOST: "h" }, { ...opts, gateway });
    expect(env).toMatchObject(want);
  });
});

describe("expandHome", () => {
  it("expands the agent-firewall module's $HOME paths, as a shell would", () => {
    const fw = ".coder-modules/coder/agent-firewall";
    const args = [`$HOME/${fw}/scripts/agent-firewall-wrapper.sh`, `--config=$HOME/${fw}/config/config.yaml`, "--"];
    const want = [`/home/u/${fw}/scripts/agent-firewall-wrapper.sh`, `--config=/home/u/${fw}/config/config.yaml`, "--"];
    expect(expandHome(args, "/home/u")).toEqual(want);
  });

  it("expands ${HOME} and leaves other variables and longer names alone", () => {
    const want = ["/h/fw", "$HOMEDIR/x", "$USER", "a/h"];
    expect(expandHome(["${HOME}/fw", "$HOMEDIR/x", "$USER", "a$HOME"], "/h")).toEqual(want);
  });

  it("takes the home folder literally, even with $ patterns in it", () => {
    expect(expandHome(["$HOME/w"], "/home/a$&b")).toEqual(["/home/a$&b/w"]);
  });
});

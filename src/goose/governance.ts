import { StepError } from "../lib/log.js";
import type { AiGatewaySettings } from "../settings/config.js";

/**
 * Goose's provider variables that send its model requests to Coder's AI
 * Gateway as the workspace owner. Goose reads ANTHROPIC_HOST and
 * ANTHROPIC_API_KEY (sent as x-api-key) for anthropic, and OPENAI_HOST,
 * OPENAI_BASE_PATH and OPENAI_API_KEY (sent as a bearer token) for openai;
 * an OPENAI_HOST from the environment outranks OPENAI_BASE_URL and the config
 * file (crates/goose/src/providers/{anthropic_def,openai_def}.rs,
 * aaif-goose/goose @ v1.46.1). The gateway takes the session token in place
 * of either key (docs/ai-coder/ai-bridge/clients/index.md, coder/coder).
 * The base path is set too, so a custom one in the user's config.yaml cannot
 * send the requests past the gateway's route. Null when the gateway is off.
 */
export function gatewayEnv(
  provider: string,
  gateway: AiGatewaySettings,
  env: NodeJS.ProcessEnv,
): Record<string, string> | null {
  if (!gateway.enabled) return null;
  const token = env[gateway.tokenEnv] ?? "";
  if (token.trim() === "")
    throw new StepError(
      `enable_ai_gateway is on, but the workspace owner's session token did not reach this script (${gateway.tokenEnv} is empty). The module sets it with a coder_env; restart the workspace so the Coder agent picks it up, and check that the deployment is Coder v2.30 or newer.`,
    );
  if (provider === "anthropic") return { ANTHROPIC_HOST: gateway.baseUrl, ANTHROPIC_API_KEY: token };
  if (provider === "openai")
    return { OPENAI_HOST: gateway.baseUrl, OPENAI_BASE_PATH: "v1/chat/completions", OPENAI_API_KEY: token };
  throw new StepError(
    `enable_ai_gateway works with goose_provider "anthropic" or "openai", not "${provider}"; re-apply the template so its plan-time check runs.`,
  );
}

const HOME_REFERENCE = /\$(?:\{HOME\}|HOME(?![A-Za-z0-9_]))/g;

/**
 * The firewall's command prefix with `$HOME` and `${HOME}` replaced by the
 * home folder: the agent-firewall module's outputs hold a literal "$HOME/..."
 * for a shell to expand (registry/coder/modules/agent-firewall/main.tf @
 * 6be121e4), and this prefix is run without one.
 */
export function expandHome(prefix: string[], home: string): string[] {
  return prefix.map((value) => value.replace(HOME_REFERENCE, () => home));
}

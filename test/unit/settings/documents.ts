// Settings documents shaped like the ones modules/agentapi/main.tf renders, and a way to spoil one field.
export const HOME = "/home/u";
export const [URL_A, URL_G] = ["https://mirror.example/agentapi", "https://mirror.example/goose"];
export const CODER = "https://coder.example.com";
const layer = { module_folder: ".coder-modules/coder/goose", port: 3284, state_file: "", pid_file: "" };

export const startDocument = () => ({
  layer: {
    ...layer,
    display_name: "Goose",
    chat_base_path: "/@a/w.1/apps/goose/chat",
    persistence: true,
    task: { id: "" },
  },
  agent: {
    folder: "/home/u/project",
    supervise: false,
    agentapi: { install: true, version: "v9.9.9", download_url: URL_A, sha256: { amd64: "a".repeat(64) } },
    goose: {
      ...{ install: true, version: "9.9.9", download_url: URL_G, sha256: {}, installer_url: "" },
      ...{ provider: "anthropic", model: "m", prompt: "fix it", system_prompt: "", session_name: "coder-1" },
      ...{ continue: true, continue_interrupted_turn: false, mode: "smart_approve", app_slug: "goose" },
      extensions: { github: { type: "stdio", cmd: "gh-mcp" } },
      install_script: { pre: "", post: "echo hi" },
      ai_gateway: { enabled: false, base_url: "", token_env: "CODER_GOOSE_AI_GATEWAY_TOKEN" },
      telemetry: { enabled: false, endpoint: "", protocol: "", headers: {}, resource_attributes: {} },
      command_prefix: [],
    },
    access: { allowed_hosts: ["proxy.example.com"], allowed_origins: [], access_url: CODER, subdomain: false },
  },
});

export const stopDocument = () => ({
  layer: { ...layer, task: { enabled: true, id: "t-1" } },
  agent: { log_snapshot: false, timeouts: { turn_ms: 2000, term_ms: 20000 }, goose_mode: "approve" },
});

/** A copy of `doc` with the value at `at` ("layer.port") replaced, or removed when `value` is undefined. */
export function edited<T>(doc: T, at: string, value: unknown): T {
  const copy = structuredClone(doc) as Record<string, unknown>;
  const keys = at.split(".");
  const last = keys.pop() as string;
  const parent = keys.reduce((node, key) => node[key] as Record<string, unknown>, copy);
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy as T;
}

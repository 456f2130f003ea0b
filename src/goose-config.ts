import { dump, load } from "js-yaml";

export function coderExtension(port: number, appSlug: string): Record<string, unknown> {
  return {
    name: "Coder",
    type: "stdio",
    cmd: "coder",
    args: ["exp", "mcp", "server"],
    description: "Report ALL tasks and statuses (in progress, done, failed) you are working on.",
    enabled: true,
    timeout: 3000,
    envs: {
      CODER_MCP_APP_STATUS_SLUG: appSlug,
      CODER_MCP_AI_AGENTAPI_URL: `http://localhost:${port}`,
    },
  };
}

export const developerExtension: Record<string, unknown> = {
  name: "developer",
  display_name: "Developer",
  type: "builtin",
  enabled: true,
  timeout: 300,
};

export interface ManagedConfig {
  settings: Record<string, unknown>;
  extensions: Record<string, unknown>;
}

/**
 * Merges the module's keys into a user's config.yaml: the module owns the
 * settings and extensions it names, every other key and extension survives.
 * Throws when the existing text is not a YAML mapping, so the caller can keep
 * the file instead of overwriting it.
 */
export function mergeGooseConfig(existing: string | null, managed: ManagedConfig): string {
  const parsed = existing === null || existing.trim() === "" ? {} : load(existing);
  if (parsed === null || parsed === undefined) return mergeGooseConfig(null, managed);
  if (typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("config.yaml is not a YAML mapping");
  const config = { ...(parsed as Record<string, unknown>) };
  const current = config.extensions;
  const extensions = current && typeof current === "object" && !Array.isArray(current) ? { ...(current as Record<string, unknown>) } : {};
  Object.assign(extensions, managed.extensions);
  Object.assign(config, managed.settings, { extensions });
  return dump(config, { lineWidth: -1, noRefs: true, sortKeys: false });
}

const HINTS_BEGIN = "<!-- coder goose module: system_prompt begin -->";
const HINTS_END = "<!-- coder goose module: system_prompt end -->";

/** Puts the system prompt in a marked block of .goosehints, leaving the user's own hints alone. */
export function upsertHintsBlock(existing: string | null, systemPrompt: string): string {
  const text = existing ?? "";
  const start = text.indexOf(HINTS_BEGIN);
  const end = text.indexOf(HINTS_END);
  let outside = text;
  if (start !== -1 && end > start) {
    outside = (text.slice(0, start) + text.slice(end + HINTS_END.length)).replace(/\n{3,}/g, "\n\n");
  }
  outside = outside.trim();
  if (systemPrompt.trim() === "") return outside === "" ? "" : `${outside}\n`;
  const block = `${HINTS_BEGIN}\n${systemPrompt.trim()}\n${HINTS_END}`;
  return outside === "" ? `${block}\n` : `${outside}\n\n${block}\n`;
}

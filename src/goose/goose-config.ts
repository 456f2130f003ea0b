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

// Object internals: a key with one of these names changes or hides what a
// plain JavaScript object holds, and extension settings pass through them.
const RESERVED_NAMES = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Why `name` cannot be an extension key under `extensions:`, or null when it
 * can. The rule is the additional_extensions variable's (letters, digits, '_'
 * and '-'; variables.tf), so a name Terraform accepted is accepted here. It
 * also matches the keys Goose writes itself: name_to_key in Goose keeps
 * [A-Za-z0-9_-], drops whitespace and turns anything else into '_'
 * (crates/goose/src/config/extensions.rs in aaif-goose/goose), so spaces and
 * dots, which Goose never writes in a key, are refused.
 */
export function extensionNameProblem(name: string): string | null {
  if (name === "") return "is empty";
  if (name !== name.trim()) return "has spaces around it";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this check's job.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return "contains control characters";
  if (RESERVED_NAMES.has(name.toLowerCase()))
    return "is reserved (__proto__, constructor and prototype name JavaScript object internals)";
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return "may only contain letters, digits, '_' and '-'";
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The extension entries the module owns: coder, developer and the template's
 * additional ones (which may replace coder or developer, as before). Entries
 * with an unusable name or a value that is not a mapping are left out with a
 * warning; Goose would skip such an entry anyway ("Skipping malformed
 * extension config entry", crates/goose/src/config/extensions.rs).
 */
export function moduleExtensions(
  port: number,
  appSlug: string,
  extra: Record<string, unknown>,
): { wanted: Map<string, unknown>; warnings: string[] } {
  const wanted = new Map<string, unknown>([
    ["coder", coderExtension(port, appSlug)],
    ["developer", developerExtension],
  ]);
  const warnings: string[] = [];
  for (const [name, value] of Object.entries(extra ?? {})) {
    const problem = extensionNameProblem(name);
    if (problem !== null)
      warnings.push(`additional extension ${JSON.stringify(name)} ${problem}; it was not added to Goose's config`);
    else if (!isPlainObject(value))
      warnings.push(`additional extension "${name}" is not a mapping of settings; it was not added to Goose's config`);
    else wanted.set(name, value);
  }
  return { wanted, warnings };
}

/**
 * The config layer the module hands Goose through GOOSE_ADDITIONAL_CONFIG_FILES:
 * the extension entries as JSON, which Goose's YAML reader (serde_yaml) reads
 * as YAML. Goose merges layers in the order system file, additional files,
 * user's config.yaml, the later one winning field by field inside each
 * extension entry, and writes only to the user's file (merge_config_values,
 * Config::load and Config::update_param in crates/goose/src/config/base.rs,
 * aaif-goose/goose at v1.46.1). So the user's config.yaml is never rewritten,
 * the user's own extensions still load, and a field the user sets for one of
 * these entries (developer's `enabled`, say) wins over the module's.
 */
export function extensionsLayer(wanted: ReadonlyMap<string, unknown>): string {
  return `${JSON.stringify({ extensions: Object.fromEntries(wanted) }, null, 2)}\n`;
}

/**
 * GOOSE_ADDITIONAL_CONFIG_FILES with the module's layer first: files listed
 * later win, so a list the user set keeps the last word over the module's
 * entries. Goose splits the value like PATH (env::split_paths).
 */
export function additionalConfigFiles(layer: string, existing: string | undefined): string {
  return existing ? `${layer}:${existing}` : layer;
}

const MARKER_PREFIX = "<!-- coder goose module: system_prompt";
const HINTS_BEGIN = `${MARKER_PREFIX} begin -->`;
const HINTS_END = `${MARKER_PREFIX} end -->`;
// Marker text inside the prompt is shown with a dash instead of the colon, so
// the file never holds a marker the module did not place itself. The
// replacement has no '<' after its first character, so it cannot combine with
// neighbouring text into a marker either.
const MARKER_ESCAPED = "<!-- coder goose module - system_prompt";

/** Drops every marker, again until none is left: removing one can join the text around it into another. */
function removeMarkerText(text: string): string {
  let out = text;
  while (out.includes(HINTS_BEGIN) || out.includes(HINTS_END))
    out = out.split(HINTS_BEGIN).join("").split(HINTS_END).join("");
  return out;
}

/**
 * Puts the system prompt in one marked block at the end of .goosehints and
 * leaves the user's own hints alone. Everything from the first begin marker
 * to the last end marker is the module's (blocks left by older versions
 * included), stray markers are dropped, and marker text inside the prompt is
 * neutralised, so applying it again to its own output changes nothing.
 */
export function upsertHintsBlock(existing: string | null, systemPrompt: string): string {
  let text = existing ?? "";
  const start = text.indexOf(HINTS_BEGIN);
  const end = text.lastIndexOf(HINTS_END);
  if (start !== -1 && end > start) text = text.slice(0, start) + text.slice(end + HINTS_END.length);
  const outside = removeMarkerText(text).trim();
  const prompt = systemPrompt.trim().split(MARKER_PREFIX).join(MARKER_ESCAPED);
  if (prompt === "") return outside === "" ? "" : `${outside}\n`;
  const block = `${HINTS_BEGIN}\n${prompt}\n${HINTS_END}`;
  return outside === "" ? `${block}\n` : `${outside}\n\n${block}\n`;
}

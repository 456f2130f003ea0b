// What the registry's coder/goose 3.x left in a workspace, recognised only
// where it is provably 3.x's. Shapes read from coder/registry at
// release/coder/goose/v3.0.1: registry/coder/modules/goose/main.tf (the
// config text), scripts/install.sh (how it was written), and
// registry/coder/modules/agentapi/scripts/main.sh at release/coder/agentapi/v2.0.0
// (the files under ~/.goose-module).
import { lstat } from "node:fs/promises";
import path from "node:path";
import { upsertHintsBlock } from "../goose/goose-config.js";

export const PREDECESSOR = "coder/goose 3.x";
/** The port 3.x's coder extension always pointed at: main.tf wrote it as a constant. */
export const PREDECESSOR_PORT = 3284;
const PREDECESSOR_SLUG = "goose";

// install.sh wrote config.yaml whole at every start: a GOOSE_PROVIDER line, a
// GOOSE_MODEL line, then `echo "$ARG_GOOSE_CONFIG"`, where ARG_GOOSE_CONFIG is
// main.tf's `extensions:` block (these lines, fixed in 3.x) followed by the
// template's additional_extensions, trimmed and indented two spaces.
const BASE_LINES = [
  "extensions:",
  "  coder:",
  "    args:",
  "    - exp",
  "    - mcp",
  "    - server",
  "    cmd: coder",
  "    description: Report ALL tasks and statuses (in progress, done, failed) you are working on.",
  "    enabled: true",
  "    envs:",
  `      CODER_MCP_APP_STATUS_SLUG: ${PREDECESSOR_SLUG}`,
  `      CODER_MCP_AI_AGENTAPI_URL: http://localhost:${PREDECESSOR_PORT}`,
  "    name: Coder",
  "    timeout: 3000",
  "    type: stdio",
  "  developer:",
  "    display_name: Developer",
  "    enabled: true",
  "    name: developer",
  "    timeout: 300",
  "    type: builtin",
];

// A key at two spaces' indent: a plain key, or a quoted one as YAML writes it.
const ENTRY_KEY = /^ {2}("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"-][^:]*?)\s*:(?:\s|$)/;

function keyName(raw: string): string {
  if (raw.startsWith('"')) {
    try {
      return JSON.parse(raw) as string;
    } catch {
      return raw.slice(1, -1);
    }
  }
  if (raw.startsWith("'")) return raw.slice(1, -1).replace(/''/g, "'");
  return raw;
}

/** The extension names of the entries in `lines` (the additional_extensions part, indented two spaces). */
function entryNames(lines: string[]): string[] {
  const names: string[] = [];
  for (const line of lines) {
    const found = ENTRY_KEY.exec(line);
    if (found) {
      const name = keyName(found[1] as string);
      if (!names.includes(name)) names.push(name);
    }
  }
  return names;
}

export interface PredecessorConfig {
  /** The GOOSE_PROVIDER and GOOSE_MODEL lines, as 3.x wrote them. */
  providerLines: string;
  /** Its extension entries: coder, developer, then the additional ones. */
  extensions: string[];
}

/**
 * The config.yaml as 3.x's install.sh wrote it, or null when the text is not
 * exactly that: any line Goose or the user added, removed or changed
 * (a comment, a key, a reordered field, another line ending) makes it null.
 */
export function matchPredecessorConfig(text: string): PredecessorConfig | null {
  if (!text.endsWith("\n")) return null;
  const lines = text.slice(0, -1).split("\n");
  const [provider, model] = lines;
  if (provider === undefined || model === undefined) return null;
  if (!provider.startsWith("GOOSE_PROVIDER: ") || !model.startsWith("GOOSE_MODEL: ")) return null;
  if (lines.length < 2 + BASE_LINES.length) return null;
  if (BASE_LINES.some((line, i) => lines[2 + i] !== line)) return null;
  const extra = lines.slice(2 + BASE_LINES.length);
  if (extra.length > 0) {
    // Terraform's trimspace, then "\n" replaced by "\n  ": the first and last
    // lines hold text, and every line starts with the two spaces.
    if (!/^ {2}\S/.test(extra[0] as string) || !/\S$/.test(extra[extra.length - 1] as string)) return null;
    if (extra.some((line) => !line.startsWith("  "))) return null;
  }
  const extensions = ["coder", "developer", ...entryNames(extra).filter((n) => n !== "coder" && n !== "developer")];
  return { providerLines: `${provider}\n${model}\n`, extensions };
}

/** What the template gives Goose now, to compare 3.x's entries with. */
export interface ModuleExtensionsView {
  port: number;
  appSlug: string;
  /** The names in the module's config layer (coder, developer and the template's additional_extensions). */
  names: string[];
}

/** Why a 3.x extension entry matters now, or null when it matches what the module gives Goose. */
function staleReason(name: string, view: ModuleExtensionsView): string | null {
  if (name === "coder") {
    const problems: string[] = [];
    if (view.port !== PREDECESSOR_PORT)
      problems.push(`pointed at :${PREDECESSOR_PORT}, not agentapi_port ${view.port}`);
    if (view.appSlug !== PREDECESSOR_SLUG)
      problems.push(`reporting to app "${PREDECESSOR_SLUG}", not "${view.appSlug}"`);
    return problems.length > 0 ? problems.join(", ") : null;
  }
  if (!view.names.includes(name)) return "the template no longer lists it";
  return null;
}

/** One note for each entry of a 3.x config.yaml that the module moves aside: what it would have done. */
export function describeMovedEntries(found: PredecessorConfig, view: ModuleExtensionsView): Array<[string, string]> {
  return found.extensions.map((name) => [
    name,
    staleReason(name, view) ?? "the module's config layer gives Goose this entry now",
  ]);
}

/**
 * For a config.yaml that holds 3.x's block but was changed since (so the
 * module leaves it): the entries in 3.x's block that override or add to what
 * the module gives Goose, each with why. Empty when the block is not there.
 */
export function staleEntriesInChangedConfig(text: string, view: ModuleExtensionsView): Array<[string, string]> {
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
  const block = BASE_LINES.slice(1);
  const at = lines.findIndex((_, i) => block.every((line, j) => lines[i + j] === line));
  if (at === -1) return [];
  const after: string[] = [];
  for (const line of lines.slice(at + block.length)) {
    if (!line.startsWith("  ") && line.trim() !== "") break;
    after.push(line);
  }
  const names = ["coder", ...entryNames(after).filter((n) => n !== "coder" && n !== "developer")];
  const stale: Array<[string, string]> = [];
  for (const name of names) {
    const reason = staleReason(name, view);
    if (reason !== null) stale.push([name, reason]);
  }
  return stale;
}

/**
 * Whether .goosehints, outside the module's block, holds nothing but a
 * system prompt: one of `prompts` (3.x wrote GOOSE_SYSTEM_PROMPT whole, with
 * echo's newline; an earlier start of this module may have trimmed it when it
 * added its block). Such text would give Goose the prompt twice.
 */
export function hintsHoldOnlyPrompt(text: string, prompts: Array<string | undefined>): boolean {
  const outside = upsertHintsBlock(text, "").trim();
  return outside !== "" && prompts.some((prompt) => prompt !== undefined && prompt.trim() === outside);
}

/** Whether .goosehints holds text outside the module's block. */
export function hintsHaveOwnText(text: string): boolean {
  return upsertHintsBlock(text, "").trim() !== "";
}

export type FolderEntry = { name: string; kind: "file" | "folder" | "other" };

// registry/coder/modules/agentapi/scripts/main.sh at release/coder/agentapi/v2.0.0
// (module_dir_name ".goose-module" from 3.x's main.tf), and 3.x's start.sh (prompt.txt).
const PREDECESSOR_FILES = new Set([
  "install.sh",
  "install.log",
  "agentapi-start.log",
  "prompt.txt",
  "pre_install.sh",
  "pre_install.log",
  "post_install.sh",
  "post_install.log",
  "scripts/agentapi-start.sh",
  "scripts/agentapi-wait-for-start.sh",
]);
const REQUIRED_FILES = ["install.sh", "scripts/agentapi-start.sh"];

/**
 * Whether a folder's entries (paths relative to it, "scripts/…" for its one
 * subfolder) are exactly what 3.x's AgentAPI layer and start.sh wrote there:
 * only those names, as files, with the two it always wrote present.
 */
export function isPredecessorFolder(entries: FolderEntry[]): boolean {
  for (const entry of entries) {
    if (entry.name === "scripts" && entry.kind === "folder") continue;
    if (entry.kind !== "file" || !PREDECESSOR_FILES.has(entry.name)) return false;
  }
  return REQUIRED_FILES.every((name) => entries.some((entry) => entry.name === name));
}

/**
 * The folder the registry's coder/goose 3.0.1 kept in HOME: its nested
 * coder/agentapi 2.0.0 module ran with module_dir_name ".goose-module"
 * (registry/coder/modules/goose/main.tf at release/coder/goose/v3.0.1,
 * coder/registry).
 */
export const PREDECESSOR_DIR = ".goose-module";

/**
 * Whether coder/goose 3.x ran in this home: ~/.goose-module is a folder
 * holding the start script its agentapi module wrote there
 * (scripts/agentapi-start.sh). None of the three is followed when it is a symlink.
 */
export async function predecessorRan(home: string): Promise<boolean> {
  const dir = path.join(home, PREDECESSOR_DIR);
  const [folder, scripts, script] = await Promise.all(
    [dir, path.join(dir, "scripts"), path.join(dir, "scripts", "agentapi-start.sh")].map((p) =>
      lstat(p).catch(() => null),
    ),
  );
  return folder?.isDirectory() === true && scripts?.isDirectory() === true && script?.isFile() === true;
}

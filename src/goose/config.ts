import { type Document, isMap, isScalar, type Node, type Pair, parseDocument, stringify } from "yaml";

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

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
  );
}

export type ConfigPlan =
  | { kind: "unchanged" }
  | { kind: "write"; text: string; changed: string[] }
  | { kind: "refuse"; reason: string };

interface Edit {
  start: number;
  end: number;
  text: string;
}

// Every string double-quoted, so neither a YAML 1.1 reader (yes/no/on/off are
// booleans there) nor a 1.2 one reads a string as another type; no folding.
const RENDER = { lineWidth: 0, defaultStringType: "QUOTE_DOUBLE", defaultKeyType: "PLAIN" } as const;

/**
 * `key: value` as block YAML whose first line starts at the cursor and whose
 * other lines carry `indent`, nesting by `step` spaces like the file around
 * it; ends with `eol`.
 */
function render(key: string, value: unknown, indent: string, eol: string, step = 2): string {
  const lines = stringify(new Map([[key, value]]), { ...RENDER, indent: step })
    .replace(/\n$/, "")
    .split("\n");
  return lines.map((line, i) => (i === 0 || line === "" ? line : indent + line)).join(eol) + eol;
}

function lineStart(text: string, pos: number): number {
  return text.lastIndexOf("\n", pos - 1) + 1;
}

function indentAt(text: string, pos: number): string {
  return /^[ ]*/.exec(text.slice(lineStart(text, pos), pos))?.[0] ?? "";
}

/** The start of the line after the one holding the character before `pos` (a value's end): a block value ends its line. */
function endOfLine(text: string, pos: number): number {
  if (pos > 0 && text[pos - 1] === "\n") return pos;
  const newline = text.indexOf("\n", pos);
  return newline === -1 ? text.length : newline + 1;
}

function keyMatches(pair: Pair, name: string): boolean {
  return isScalar(pair.key) && String(pair.key.value) === name;
}

function valueEnd(pair: Pair): number {
  const value = pair.value as Node | null;
  if (value?.range) return value.range[1];
  return (pair.key as Node).range?.[1] ?? 0;
}

function applyEdits(text: string, edits: Edit[]): string {
  let out = text;
  for (const edit of [...edits].sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

function newlineBefore(text: string, pos: number, eol: string): string {
  return pos === 0 || text[pos - 1] === "\n" ? "" : eol;
}

function planEdits(text: string, doc: Document, changed: Map<string, unknown>, eol: string): Edit[] | string {
  const contents = doc.contents as Node | null;
  if (
    contents === null ||
    (isScalar(contents) && contents.value === null && contents.range?.[0] === contents.range?.[1])
  ) {
    return [
      {
        start: text.length,
        end: text.length,
        text: newlineBefore(text, text.length, eol) + render("extensions", changed, "", eol),
      },
    ];
  }
  if (!isMap(contents)) return "its top level is not a mapping";
  if (contents.flow) return "its top level is written in flow style ({...}), which the module does not edit";
  const extPairs = contents.items.filter((pair) => keyMatches(pair, "extensions"));
  if (extPairs.length === 0) {
    const pos = endOfLine(text, contents.range?.[2] ?? text.length);
    const first = contents.items[0];
    const indent = first ? indentAt(text, (first.key as Node).range?.[0] ?? 0) : "";
    return [
      {
        start: pos,
        end: pos,
        text: newlineBefore(text, pos, eol) + indent + render("extensions", changed, indent, eol),
      },
    ];
  }
  if (extPairs.length > 1) return "it has more than one extensions key";
  const ext = extPairs[0] as Pair;
  const keyStart = (ext.key as Node).range?.[0] ?? 0;
  const value = ext.value as Node | null;
  const emptyValue =
    value === null ||
    (isScalar(value) && value.value === null) ||
    (isMap(value) && value.flow && value.items.length === 0);
  if (emptyValue) {
    return [
      {
        start: keyStart,
        end: endOfLine(text, valueEnd(ext)),
        text: render("extensions", changed, indentAt(text, keyStart), eol),
      },
    ];
  }
  if (!isMap(value)) return "its extensions entry is not a mapping";
  if (value.flow) return "its extensions mapping is written in flow style ({...}), which the module does not edit";
  const firstKey = (value.items[0]?.key as Node | undefined)?.range?.[0] ?? 0;
  const indent = indentAt(text, firstKey);
  const step = Math.max(1, indent.length - indentAt(text, keyStart).length);
  const last = value.items[value.items.length - 1] as Pair;
  const insertAt = endOfLine(text, valueEnd(last));
  const edits: Edit[] = [];
  let appended = "";
  for (const [name, wanted] of changed) {
    const pairs = value.items.filter((pair) => keyMatches(pair, name));
    if (pairs.length > 1) return `it lists extension "${name}" more than once`;
    const pair = pairs[0];
    if (pair) {
      const start = (pair.key as Node).range?.[0] ?? 0;
      edits.push({
        start,
        end: endOfLine(text, valueEnd(pair)),
        text: render(name, wanted, indentAt(text, start), eol, step),
      });
    } else {
      appended += indent + render(name, wanted, indent, eol, step);
    }
  }
  if (appended !== "")
    edits.push({ start: insertAt, end: insertAt, text: newlineBefore(text, insertAt, eol) + appended });
  return edits;
}

function extensionsOf(js: unknown): Record<string, unknown> {
  const ext = isPlainObject(js) ? js.extensions : undefined;
  return isPlainObject(ext) ? ext : {};
}

/**
 * How to bring a Goose config.yaml to the module's extension entries while
 * leaving every other byte of it alone: comments, key order, quoting and
 * number text outside the changed entries survive because the new entries
 * are spliced into the original text at the positions the parser reports,
 * instead of re-serialising the document. The result is parsed again and must
 * mean exactly the old document with those entries set; anything the module
 * cannot edit that way is refused, never overwritten.
 */
export function planConfigEdit(text: string | null, wanted: ReadonlyMap<string, unknown>): ConfigPlan {
  if (text === null)
    return { kind: "write", text: render("extensions", wanted, "", "\n"), changed: [...wanted.keys()] };
  const doc = parseDocument(text);
  if (doc.errors.length > 0)
    return { kind: "refuse", reason: `it is not valid YAML (${doc.errors[0]?.message.split("\n")[0]})` };
  let before: unknown;
  try {
    before = doc.toJS();
  } catch (error) {
    return { kind: "refuse", reason: `it could not be read (${(error as Error).message})` };
  }
  const current = extensionsOf(before);
  const changed = new Map(
    [...wanted].filter(([name, value]) => !(Object.hasOwn(current, name) && deepEqual(current[name], value))),
  );
  if (changed.size === 0) return { kind: "unchanged" };

  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const edits = planEdits(text, doc, changed, eol);
  if (typeof edits === "string") return { kind: "refuse", reason: edits };
  const next = applyEdits(text, edits);

  const check = parseDocument(next);
  const expected = {
    ...(isPlainObject(before) ? before : {}),
    extensions: { ...current, ...Object.fromEntries(changed) },
  };
  let after: unknown;
  try {
    after = check.errors.length === 0 ? check.toJS() : undefined;
  } catch {
    after = undefined;
  }
  if (!deepEqual(after, expected))
    return { kind: "refuse", reason: "the module could not add its entries without changing something else in it" };
  return { kind: "write", text: next, changed: [...changed.keys()] };
}

/** What to tell a user whose config.yaml the module left alone. */
export function manualConfigAdvice(file: string, why: string, names: string[]): string {
  return `${file} was left unchanged: ${why}. Goose will run without the module's extension settings; add these entries under "extensions:" yourself: ${names.join(", ")}.`;
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

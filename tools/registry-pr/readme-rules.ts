// The rules coder/registry's README validator (cmd/readmevalidation) applies to a module
// README, written for this project from the validator's source at
// coder/registry@6be121e4f6eabd2f248cb9c81953af4c95457634:
// - readmefiles.go: the front matter fences, the allowed keys, the header levels;
// - coderresources.go: the front matter fields, the icon path, the GitHub alerts;
// - codermodules.go: the h1 section (a paragraph and one ```tf block with `version =`);
// - repostructure.go: the module folder's name, README.md and main.tf.
// Each message is the validator's own wording, so a failure reads as the registry's CI
// would print it. The registry's parsing is line-based (a fence is any line starting
// with three backticks), and so is this.
import path from "node:path";
import { YAML } from "zx";

const ALLOWED_KEYS = ["description", "icon", "display_name", "verified", "tags", "supported_os", "maintainer_github"];
const OPERATING_SYSTEMS = ["windows", "macos", "linux"];
const ALERT_TYPES = ["NOTE", "IMPORTANT", "CAUTION", "WARNING", "TIP"];
const ICON_PREFIX = "../../../../.icons/";
const HEADER = /^(#+)(\s*)/;
const VERSION_LINE = /^\s*\bversion\s+=/;
const ALERT = /^>(\s*)\[!(\w+)\](\s*)(.*)/;
// Go's url.QueryEscape leaves exactly these characters as they are.
const QUERY_SAFE = /^[A-Za-z0-9._~-]*$/;
const MODULE_NAME = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/;

const lines = (text: string) => text.split("\n").map((line) => line.replace(/\r$/, ""));
const isFence = (line: string) => line.startsWith("```");

/** The front matter (each line trimmed) and the body, or why the README has none. */
export function splitFrontMatter(text: string): { frontMatter: string; body: string } | { error: string } {
  if (text === "") return { error: "README is empty" };
  let fences = 0;
  const frontMatter: string[] = [];
  const body: string[] = [];
  for (const line of lines(text.trim())) {
    if (fences < 2 && line === "---") {
      fences++;
      continue;
    }
    if (fences === 0) break;
    if (fences >= 2) body.push(line);
    else frontMatter.push(line.trim());
  }
  if (fences < 2) return { error: "README does not have two sets of frontmatter fences" };
  if (frontMatter.length === 0) return { error: "readme has frontmatter fences but no frontmatter content" };
  return { frontMatter: frontMatter.map((line) => `${line}\n`).join(""), body: body.join("\n").trim() };
}

/**
 * The front matter's errors. `readmePath` is the README's path inside the registry;
 * `iconExists` says whether a registry path exists.
 */
export function frontMatterErrors(
  frontMatter: string,
  readmePath: string,
  iconExists: (registryPath: string) => boolean,
): string[] {
  const unknown = lines(frontMatter)
    .filter((line) => line.includes(":"))
    .map((line) => line.slice(0, line.indexOf(":")))
    .filter((key) => !ALLOWED_KEYS.includes(key));
  if (unknown.length > 0) return unknown.map((key) => `detected unknown key "${key}"`);
  let fields: Record<string, unknown>;
  try {
    fields = (YAML.parse(frontMatter) ?? {}) as Record<string, unknown>;
  } catch (error) {
    return [`failed to parse: ${(error as Error).message}`];
  }
  // The validator decodes into typed fields; a value of another type fails the parse.
  const mistyped = Object.entries(fields).filter(([key, value]) => {
    if (value == null) return false;
    if (key === "verified") return typeof value !== "boolean";
    if (key === "tags" || key === "supported_os") return !Array.isArray(value);
    return typeof value !== "string";
  });
  if (mistyped.length > 0) return mistyped.map(([key]) => `failed to parse: "${key}" has the wrong type`);
  const errors: string[] = [];
  const text = (key: string) => (fields[key] as string | undefined) ?? "";
  if (fields.display_name != null && text("display_name") === "")
    errors.push("if defined, display_name must not be empty string");
  if (text("description") === "") errors.push("frontmatter description cannot be empty");
  const tags = fields.tags as unknown[] | null | undefined;
  if (tags == null) errors.push("provided tags array is nil");
  else {
    const invalid = tags.filter((tag) => !QUERY_SAFE.test(String(tag)));
    if (invalid.length > 0)
      errors.push(
        `found invalid tags (tags that cannot be used for filter state in the Registry website): [${invalid.join(", ")}]`,
      );
  }
  const icon = text("icon");
  if (icon === "") errors.push("icon URL cannot be empty");
  else if (icon.startsWith("http://") || icon.startsWith("https://"))
    errors.push(`icon URL must reference the top-level .icons directory, not an absolute URL "${icon}"`);
  else if (!icon.startsWith(ICON_PREFIX))
    errors.push(`icon URL "${icon}" must reference the top-level .icons directory using "${ICON_PREFIX}"`);
  else {
    const resolved = path.posix.join(path.posix.dirname(readmePath), icon);
    if (!iconExists(resolved))
      errors.push(`icon file does not exist at resolved path "${resolved}" (referenced as "${icon}")`);
  }
  for (const system of (fields.supported_os as unknown[] | undefined) ?? [])
    if (!OPERATING_SYSTEMS.includes(String(system))) errors.push(`detected unknown operating system "${system}"`);
  return errors;
}

/** Header rules for any registry README body. */
export function headerErrors(body: string): string[] {
  const trimmed = body.trim();
  if (trimmed === "") return ["README body is empty"];
  if (!trimmed.startsWith("# ")) return ['README body must start with ATX-style h1 header (i.e., "# ")'];
  const errors: string[] = [];
  let level = 0;
  let sawH1 = false;
  let inCode = false;
  for (const line of lines(trimmed)) {
    if (isFence(line)) {
      inCode = !inCode;
      continue;
    }
    if (inCode) continue;
    const header = HEADER.exec(line);
    if (!header) continue;
    if (header[2] === "") errors.push("header does not have space between header characters and main header text");
    const next = (header[1] as string).length;
    if (next === 1 && !sawH1) {
      sawH1 = true;
      level = 1;
      continue;
    }
    if (next === 1) {
      errors.push("READMEs cannot contain more than h1 header");
      break;
    }
    if (next > 6) {
      errors.push(`README/HTML files cannot have headers exceed level 6 (found level ${next})`);
      break;
    }
    if (next > level && next !== level + 1) {
      errors.push("headers are not allowed to increase more than 1 level at a time");
      continue;
    }
    level = next;
  }
  return errors;
}

/** The h1 section of a module README: a paragraph and exactly one ```tf block with a `version =` line. */
export function h1SectionErrors(body: string): string[] {
  const all = lines(body.trim());
  let paragraph = false;
  let tfBlocks = 0;
  let version = false;
  let inCode = false;
  let inTf = false;
  const errors: string[] = [];
  if (all[0]?.startsWith("# ")) {
    for (const line of all.slice(1)) {
      if (isFence(line)) {
        inCode = !inCode;
        inTf = inCode && line.startsWith("```tf");
        if (inTf) tfBlocks++;
        if (line.startsWith("```hcl")) errors.push("all hcl code blocks must be converted to tf");
        continue;
      }
      if (inCode) {
        if (inTf) version ||= VERSION_LINE.test(line);
        continue;
      }
      if (line.startsWith("#")) break;
      const text = line.trim();
      paragraph ||= text !== "" && !text.startsWith("![") && !text.startsWith("<");
    }
  }
  if (tfBlocks === 0) errors.push("did not find Terraform code block within h1 section");
  else {
    if (tfBlocks > 1) errors.push("cannot have more than one Terraform code block in h1 section");
    if (!version) errors.push("did not find Terraform code block that specifies 'version' field");
  }
  if (!paragraph) errors.push("did not find paragraph within h1 section");
  if (inCode) errors.push("code blocks inside h1 section do not all terminate before end of file");
  return errors;
}

/** GitHub alert syntax (`> [!NOTE]` alone on its line, one of five types, in capitals, not nested). */
export function alertErrors(body: string): string[] {
  const trimmed = body.trim();
  if (trimmed === "") return [];
  const errors: string[] = [];
  let inAlert = false;
  let inCode = false;
  let last = "";
  for (const line of lines(trimmed)) {
    last = line;
    if (isFence(line)) {
      inCode = !inCode;
      continue;
    }
    if (inCode) continue;
    inAlert &&= line.startsWith("> ");
    const alert = ALERT.exec(line);
    if (!alert) continue;
    if (inAlert) {
      errors.push("registry does not support nested GFM alerts");
      continue;
    }
    const [, leading, type, trailing, extra] = alert as unknown as [string, string, string, string, string];
    if (leading.length !== 1)
      errors.push("GFM alerts must have one space between the '>' and the start of the GFM brackets");
    inAlert = true;
    if (!ALERT_TYPES.includes(type.toUpperCase())) errors.push(`GFM alert type "${type}" is not supported`);
    if (type !== type.toUpperCase()) errors.push("GFM alerts must be in all caps");
    if (trailing !== "") errors.push("GFM alerts must not have any trailing whitespace after the closing bracket");
    if (extra !== "") errors.push("GFM alerts must not have any extra content on the same line");
  }
  if (ALERT.test(last)) errors.push("README has an incomplete GFM alert at the end of the file");
  return errors;
}

/** Every error the validator reports for a module README at `readmePath` (a path inside the registry). */
export function moduleReadmeErrors(
  text: string,
  readmePath: string,
  iconExists: (registryPath: string) => boolean,
): string[] {
  const split = splitFrontMatter(text);
  if ("error" in split) return [`failed to parse frontmatter: ${split.error}`];
  const fields = frontMatterErrors(split.frontMatter, readmePath, iconExists);
  if (fields.some((error) => error.startsWith("detected unknown key") || error.startsWith("failed to parse")))
    return fields;
  return [...headerErrors(split.body), ...h1SectionErrors(split.body), ...alertErrors(split.body), ...fields];
}

/** The module folder's own rules: its name, and the two files every module has. */
export function moduleFolderErrors(name: string, has: (file: string) => boolean): string[] {
  const errors: string[] = [];
  if (!MODULE_NAME.test(name))
    errors.push(`"${name}": name contains invalid characters (only alphanumeric characters and hyphens are allowed)`);
  for (const file of ["README.md", "main.tf"]) if (!has(file)) errors.push(`'${file}' does not exist`);
  return errors;
}

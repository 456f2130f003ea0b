// Rules the registry's CI scripts apply to a module folder's files, written for this project
// from coder/registry@6be121e4 (scripts/terraform_validate.sh, scripts/validate_set_u_order.sh),
// and one of this project's own: a relative link in a Markdown file must reach a file the
// folder carries.
import path from "node:path";

/** Variables named with a hyphen (terraform_validate.sh, validate_variable_names). */
export function hyphenatedVariables(tf: string): string[] {
  return [...tf.matchAll(/variable "([^"]*-[^"]*)"/g)].map((match) => match[1] as string);
}

const SET_U = /^set -[a-z]*u/;
const SOURCES_PROFILE = /^\s*(source|\.)\s+.*(\$HOME\/\.bashrc|\/etc\/bashrc|\/etc\/os-release)/;

/**
 * validate_set_u_order.sh: a script that turns on `set -u` and sources a shell profile
 * or /etc/os-release must source it first. Returns the two line numbers when it does not.
 */
export function setUBeforeSource(script: string): { setU: number; source: number } | null {
  const lines = script.split("\n");
  const setU = lines.findIndex((line) => SET_U.test(line));
  const source = lines.findIndex((line) => SOURCES_PROFILE.test(line));
  if (setU === -1 || source === -1 || setU > source) return null;
  return { setU: setU + 1, source: source + 1 };
}

/**
 * The relative link targets of a Markdown file (links and images, outside fenced code),
 * resolved against the file's folder, without their #fragment.
 */
export function relativeLinkTargets(markdownPath: string, text: string): string[] {
  const targets: string[] = [];
  let inCode = false;
  for (const line of text.split("\n")) {
    if (line.trimStart().startsWith("```")) {
      inCode = !inCode;
      continue;
    }
    if (inCode) continue;
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = (match[1] as string).split("#")[0] as string;
      if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("/")) continue;
      targets.push(path.posix.normalize(path.posix.join(path.posix.dirname(markdownPath), target)));
    }
  }
  return targets;
}

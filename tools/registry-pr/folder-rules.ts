// Rules the registry's CI scripts apply to a module folder's files, written for this project
// from coder/registry@6be121e4 (scripts/terraform_validate.sh, scripts/validate_set_u_order.sh),
// and two of this project's own: a link in a Markdown file must reach a file the folder
// carries, and the README's links must resolve where registry.coder.com renders it.
import path from "node:path";
import { FOLDER_URL_PATTERN } from "./registry.js";

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

export interface MarkdownLink {
  /** The link's target as written, #fragment included. */
  target: string;
  image: boolean;
}

const LINK = /(!?)\[([^\]]*)\]\(([^)\s]+)((?:\s+"[^"]*")?)\)/g;
const isRelative = (target: string) =>
  target !== "" && !target.startsWith("#") && !target.startsWith("/") && !/^[a-z][a-z0-9+.-]*:/i.test(target);

/** Rewrites each line of a Markdown text outside fenced code. */
export function outsideCode(text: string, rewrite: (line: string) => string): string {
  let inCode = false;
  return text
    .split("\n")
    .map((line) => {
      if (line.trimStart().startsWith("```")) {
        inCode = !inCode;
        return line;
      }
      return inCode ? line : rewrite(line);
    })
    .join("\n");
}

/** The links and pictures of a Markdown text, outside fenced code. */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  outsideCode(text, (line) => {
    for (const match of line.matchAll(LINK)) links.push({ target: match[3] as string, image: match[1] === "!" });
    return line;
  });
  return links;
}

/** Rewrites the relative targets of a Markdown text's links and pictures, outside fenced code. */
export function rewriteRelativeLinks(text: string, rewrite: (link: MarkdownLink) => string | undefined): string {
  return outsideCode(text, (line) =>
    line.replace(LINK, (whole, bang: string, label: string, target: string, title: string) => {
      if (!isRelative(target)) return whole;
      const moved = rewrite({ target, image: bang === "!" });
      return moved === undefined ? whole : `${bang}[${label}](${moved}${title})`;
    }),
  );
}

const withoutFragment = (target: string) => target.split("#")[0] as string;

/**
 * The relative link targets of a Markdown file (links and pictures, outside fenced code),
 * resolved against the file's folder, without their #fragment.
 */
export function relativeLinkTargets(markdownPath: string, text: string): string[] {
  return markdownLinks(text)
    .map((link) => withoutFragment(link.target))
    .filter(isRelative)
    .map((target) => path.posix.normalize(path.posix.join(path.posix.dirname(markdownPath), target)));
}

/** Links of a text into the module folder as GitHub shows it (folderUrl), as registry paths. */
export function folderUrlTargets(text: string): string[] {
  return markdownLinks(text).flatMap((link) => {
    const match = FOLDER_URL_PATTERN.exec(link.target);
    return match ? [path.posix.normalize(match[1] as string).replace(/\/$/, "")] : [];
  });
}

/** The README's links registry.coder.com cannot follow: relative ones that are not pictures. */
export const siteUnresolvable = (readme: string) =>
  markdownLinks(readme)
    .filter((link) => !link.image && isRelative(link.target))
    .map((link) => link.target);

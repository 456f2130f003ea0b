// What the registry's scorer (.github/scorecard/score-modules.ts at coder/registry@6be121e4,
// gatherModuleContext) reads of a module folder and sends to the model: every file whose
// name ends in one of SCORED_SUFFIXES, in JavaScript's default sort of the folder-relative
// paths, each as `=== FILE: <path> ===` and its text cut at 30,000 characters, joined by
// blank lines, then a block saying which README images exist. The rubric and the
// instructions come on top of it.
import { CHARS_PER_TOKEN, SCORED_SUFFIXES, SCORER_MAX_FILE_CHARS } from "./registry.js";

export interface FolderFile {
  /** Path relative to the module folder, with forward slashes. */
  path: string;
  text: string;
}

export interface ImageCheck {
  reference: string;
  /** null: an external URL; otherwise whether the file exists, and its size. */
  bytes: number | null | "missing";
}

export const isScored = (file: string) => SCORED_SUFFIXES.some((suffix) => file.endsWith(suffix));

const cut = (text: string) =>
  text.length <= SCORER_MAX_FILE_CHARS ? text : `${text.slice(0, SCORER_MAX_FILE_CHARS)}\n... [truncated]`;

/** The README's image references, as the scorer lists them (absolute paths are left out). */
export function readmeImages(readme: string): string[] {
  return [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((reference) => !reference.startsWith("/"));
}

/** The text the scorer builds from the folder, where each scored file starts in it, and the files it cuts short. */
export function scorerContext(
  files: FolderFile[],
  images: ImageCheck[],
): { text: string; starts: Map<string, number>; scored: number; cut: string[] } {
  const parts: string[] = [];
  const starts = new Map<string, number>();
  let offset = 0;
  const scored = files
    .filter((file) => isScored(file.path))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const file of scored) {
    starts.set(file.path, offset);
    const part = `=== FILE: ${file.path} ===\n${cut(file.text)}`;
    parts.push(part);
    offset += part.length + 2;
  }
  if (images.length > 0) {
    const lines = images.map(({ reference, bytes }) =>
      bytes === null
        ? `  → ${reference} — external URL`
        : bytes === "missing"
          ? `  ✗ ${reference} — NOT FOUND`
          : `  ✓ ${reference} — exists${bytes ? ` (${(bytes / 1024).toFixed(1)} KB)` : ""}`,
    );
    parts.push(`=== README IMAGE VERIFICATION ===\n${lines.join("\n")}`);
  }
  const cutFiles = scored.filter((file) => file.text.length > SCORER_MAX_FILE_CHARS).map((file) => file.path);
  return { text: parts.join("\n\n"), starts, scored: scored.length, cut: cutFiles };
}

export const estimatedTokens = (characters: number) => Math.ceil(characters / CHARS_PER_TOKEN);

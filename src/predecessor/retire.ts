import { constants } from "node:fs";
import { link, lstat, open, readdir, unlink } from "node:fs/promises";
import path from "node:path";
import { upsertHintsBlock } from "../goose/goose-config.js";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { ownedByUs } from "../lib/files.js";
import {
  describeMovedEntries,
  type FolderEntry,
  hintsHaveOwnText,
  hintsHoldOnlyPrompt,
  isPredecessorFolder,
  type ModuleExtensionsView,
  matchPredecessorConfig,
  PREDECESSOR,
  PREDECESSOR_DIR,
  PREDECESSOR_PORT,
  staleEntriesInChangedConfig,
} from "./config-files.js";

export interface PredecessorReport {
  lines: string[];
  warnings: string[];
}

type Examined = { kind: "missing" } | { kind: "file"; text: string; mode: number } | { kind: "not-file"; what: string };

const unreadable = (error: Error): Examined => ({
  kind: "not-file",
  what: `could not be read (${error.message})`,
});

/** A user's file as it is, never through a link: lstat, then an O_NOFOLLOW read. */
async function examine(file: string): Promise<Examined> {
  let info;
  try {
    info = await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    return { kind: "not-file", what: `could not be examined (${(error as Error).message})` };
  }
  if (info.isSymbolicLink()) return { kind: "not-file", what: "is a symbolic link" };
  if (!info.isFile()) return { kind: "not-file", what: "is not a regular file" };
  if (!ownedByUs(info.uid)) return { kind: "not-file", what: `belongs to another user (uid ${info.uid})` };
  return { kind: "file", text: await readNoFollow(file), mode: info.mode & 0o777 };
}

async function readNoFollow(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Keeps `file` as `backup` (a hard link: the same bytes and mode, and link(2)
 * never replaces an existing name), then puts `text` in its place with the
 * same mode. Only when the backup still holds `expected`, the text the
 * decision was made on; otherwise the backup goes and nothing changes.
 */
async function replaceKeepingBackup(
  file: string,
  backup: string,
  expected: string,
  text: string,
  mode: number,
): Promise<string | null> {
  try {
    await link(file, backup);
  } catch (error) {
    return `the backup ${backup} could not be made (${(error as Error).message})`;
  }
  if ((await readNoFollow(backup).catch(() => null)) !== expected) {
    await unlink(backup).catch(() => undefined);
    return "it changed while the module was reading it";
  }
  try {
    await writeFileAtomic(file, text, { mode });
  } catch (error) {
    return `writing it failed (${(error as Error).message}); the original is kept at ${backup}`;
  }
  return null;
}

/** The folder's entries, one level into its "scripts" folder; null when it is missing or not a real folder. */
async function folderEntries(dir: string): Promise<FolderEntry[] | null> {
  const info = await lstat(dir).catch(() => null);
  if (!info?.isDirectory()) return null;
  const kindOf = (entry: { isFile(): boolean; isDirectory(): boolean }): FolderEntry["kind"] =>
    entry.isFile() ? "file" : entry.isDirectory() ? "folder" : "other";
  const entries: FolderEntry[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    entries.push({ name: entry.name, kind: kindOf(entry) });
    if (entry.name === "scripts" && entry.isDirectory())
      for (const inner of await readdir(path.join(dir, "scripts"), { withFileTypes: true }))
        entries.push({ name: `scripts/${inner.name}`, kind: kindOf(inner) });
  }
  return entries;
}

function timeTag(now: Date): string {
  return now.toISOString().replace(/[:.]/g, "-");
}

/**
 * Keeps what coder/goose 3.x left in Goose's config folder from overriding
 * the module, touching only what is provably 3.x's (goose/predecessor.ts):
 * a config.yaml exactly as 3.x wrote it is kept as a backup and replaced by
 * its GOOSE_PROVIDER and GOOSE_MODEL lines alone (Goose's environment, set
 * by the launch, wins over both, and a `goose` the user runs in a terminal
 * keeps its provider); a .goosehints that outside the module's block holds
 * only the system prompt is kept as a backup and replaced by the block. What
 * looks like 3.x's but is not provably so is left, with a warning that says
 * what to delete. ~/.goose-module is never deleted, only named.
 */
export async function retirePredecessor(opts: {
  home: string;
  configDir: string;
  view: ModuleExtensionsView;
  /** The system prompt the module writes (empty: none). */
  systemPrompt: string;
  /** GOOSE_SYSTEM_PROMPT as the agent's environment held it, which 3.x wrote to .goosehints. */
  envSystemPrompt: string | undefined;
  now?: Date;
}): Promise<PredecessorReport> {
  const report: PredecessorReport = { lines: [], warnings: [] };
  const tag = `coder-goose-3x-${timeTag(opts.now ?? new Date())}`;
  const moduleFolder = path.join(opts.home, PREDECESSOR_DIR);
  const entries = await folderEntries(moduleFolder).catch(() => null);
  const upgraded = entries !== null && isPredecessorFolder(entries);
  if (upgraded)
    report.lines.push(
      `${moduleFolder} was left by ${PREDECESSOR} (its install and start scripts and their logs); nothing reads it any more, so it is safe to delete`,
    );

  const configFile = path.join(opts.configDir, "config.yaml");
  const config = await examine(configFile).catch(unreadable);
  if (config.kind === "not-file" && upgraded)
    report.warnings.push(
      `${configFile} ${config.what}, so the module did not look for ${PREDECESSOR}'s entries in it. If it holds extensions.coder pointed at :${PREDECESSOR_PORT} or extensions the template no longer lists, delete those entries: they override the module's.`,
    );
  if (config.kind === "file") {
    const found = matchPredecessorConfig(config.text);
    if (found !== null) {
      const backup = `${configFile}.${tag}`;
      const failed = await replaceKeepingBackup(configFile, backup, config.text, found.providerLines, config.mode);
      if (failed !== null)
        report.warnings.push(
          `${configFile} was written by ${PREDECESSOR}, and its extensions override the module's, but it was left as it is: ${failed}. Delete its extensions: block.`,
        );
      else {
        for (const [name, note] of describeMovedEntries(found, opts.view))
          report.lines.push(
            `config.yaml: extensions.${name} (written by ${PREDECESSOR}, ${note}) moved aside to ${backup}`,
          );
        report.lines.push(
          `config.yaml: kept its GOOSE_PROVIDER and GOOSE_MODEL lines for a goose run in a terminal; the module's Goose takes goose_provider and goose_model from its environment`,
        );
      }
    } else {
      for (const [name, why] of staleEntriesInChangedConfig(config.text, opts.view))
        report.warnings.push(
          `${configFile}: extensions.${name} looks like ${PREDECESSOR}'s (${why}) and wins over the module's config layer (Goose reads config.yaml last); the module left it because the file changed since ${PREDECESSOR} wrote it. Delete that entry from the file.`,
        );
    }
  }

  if (opts.systemPrompt.trim() === "") return report;
  const hintsFile = path.join(opts.configDir, ".goosehints");
  const hints = await examine(hintsFile).catch(unreadable);
  if (hints.kind === "not-file" && upgraded)
    report.warnings.push(
      `${hintsFile} ${hints.what}, so the module did not check it for ${PREDECESSOR}'s copy of the system prompt; if it holds one, delete it so Goose reads the system prompt once.`,
    );
  if (hints.kind !== "file") return report;
  if (hintsHoldOnlyPrompt(hints.text, [opts.envSystemPrompt, opts.systemPrompt])) {
    const backup = `${hintsFile}.${tag}`;
    const text = upsertHintsBlock(null, opts.systemPrompt);
    const failed = await replaceKeepingBackup(hintsFile, backup, hints.text, text, hints.mode);
    if (failed === null)
      report.lines.push(
        `.goosehints: the system prompt ${PREDECESSOR} wrote there is now the module's block alone, so Goose reads it once; the old file is kept at ${backup}`,
      );
    else
      report.warnings.push(
        `${hintsFile} holds ${PREDECESSOR}'s copy of the system prompt beside the module's block, but it was left as it is: ${failed}. Delete the text outside the module's block.`,
      );
  } else if (upgraded && hintsHaveOwnText(hints.text)) {
    report.warnings.push(
      `${hintsFile} holds text outside the module's block, which may be ${PREDECESSOR}'s old GOOSE_SYSTEM_PROMPT; the module left it because it differs from the system prompt. If it is the old prompt, delete it so Goose reads one system prompt.`,
    );
  }
  return report;
}

import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { ownedByUs, readTextOrNull } from "../lib/files.js";
import { mkdirPrivate } from "../lib/private-dirs.js";
import type { GooseSettings } from "../settings/config.js";
import { extensionsLayer, moduleExtensions, upsertHintsBlock } from "./goose-config.js";

/** What configureGoose did to one file; "created" and "written" were read back and match. */
export type FileOutcome =
  | { file: string; action: "created" | "written"; detail: string }
  | { file: string; action: "unchanged" }
  | { file: string; action: "skipped"; warning: string };

export interface GooseSetupResult {
  config: FileOutcome;
  hints: FileOutcome;
  /** Everything the user should hear about: skipped files and refused extensions. */
  warnings: string[];
}

type Write = { kind: "write"; text: string; detail: string };
type Decision = { kind: "unchanged" } | Write;

type Location = { kind: "missing" } | { kind: "file"; path: string; mode: number } | { kind: "refuse"; reason: string };

/**
 * Where the user's file really is and whether the module may replace it.
 * A symlinked file (dotfile managers do that) stays a link: its target is
 * replaced instead, but only when the link and the target are the user's and
 * nobody else can write in the target's folder, where the temporary file and
 * the rename happen.
 */
async function locate(file: string): Promise<Location> {
  let info;
  try {
    info = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    return { kind: "refuse", reason: `it could not be examined (${(error as Error).message})` };
  }
  if (info.isDirectory()) return { kind: "refuse", reason: "it is a folder" };
  if (info.isFile()) {
    if (!ownedByUs(info.uid)) return { kind: "refuse", reason: `it belongs to another user (uid ${info.uid})` };
    return { kind: "file", path: file, mode: info.mode & 0o777 };
  }
  if (!info.isSymbolicLink()) return { kind: "refuse", reason: "it is not a regular file" };
  if (!ownedByUs(info.uid))
    return { kind: "refuse", reason: `it is a symbolic link that belongs to another user (uid ${info.uid})` };
  let target: string;
  try {
    target = realpathSync(file);
  } catch (error) {
    return {
      kind: "refuse",
      reason: `it is a symbolic link whose target cannot be reached (${(error as Error).message})`,
    };
  }
  const targetInfo = statSync(target);
  if (!targetInfo.isFile())
    return { kind: "refuse", reason: `it is a symbolic link to ${target}, which is not a regular file` };
  if (!ownedByUs(targetInfo.uid))
    return {
      kind: "refuse",
      reason: `it is a symbolic link to ${target}, which belongs to another user (uid ${targetInfo.uid})`,
    };
  const folder = path.dirname(target);
  if ((statSync(folder).mode & 0o022) !== 0)
    return { kind: "refuse", reason: `it is a symbolic link to ${target}, whose folder other users can write to` };
  return { kind: "file", path: target, mode: targetInfo.mode & 0o777 };
}

/**
 * Reads a user's file, asks `decide` for its new text, and writes it only
 * when it changes: through a temporary file and a rename next to the real
 * file, keeping its mode (new files 0600 in folders created 0700). The result
 * says what happened, checked by reading the file back.
 */
async function updateUserFile(
  file: string,
  decide: (text: string | null) => Decision,
  advise: (reason: string) => string,
): Promise<FileOutcome> {
  const unexamined = (error: Error): Location => ({
    kind: "refuse",
    reason: `it could not be examined (${error.message})`,
  });
  const where = await locate(file).catch(unexamined);
  if (where.kind === "refuse") return { file, action: "skipped", warning: advise(where.reason) };
  let before: string | null = null;
  if (where.kind === "file") {
    try {
      before = readFileSync(where.path, "utf8");
    } catch (error) {
      return { file, action: "skipped", warning: advise(`it could not be read (${(error as Error).message})`) };
    }
  }
  const decision = decide(before);
  if (decision.kind === "unchanged") return { file, action: "unchanged" };
  try {
    if (where.kind === "missing") {
      await mkdirPrivate(path.dirname(file));
      await writeFileAtomic(file, decision.text, { mode: 0o600 });
    } else {
      await writeFileAtomic(where.path, decision.text, { mode: where.mode });
    }
  } catch (error) {
    return { file, action: "skipped", warning: advise(`writing it failed (${(error as Error).message})`) };
  }
  const written = readTextOrNull(file);
  if (written !== decision.text)
    return {
      file,
      action: "skipped",
      warning: advise("it was replaced, but reading it back did not give the module's text"),
    };
  return { file, action: where.kind === "missing" ? "created" : "written", detail: decision.detail };
}

/** Goose's config folder: GOOSE_PATH_ROOT/config when absolute, else XDG (crates/goose/src/config/paths.rs in aaif-goose/goose). */
export function gooseConfigDir(env: NodeJS.ProcessEnv, home: string): string {
  if (env.GOOSE_PATH_ROOT && path.isAbsolute(env.GOOSE_PATH_ROOT)) return path.join(env.GOOSE_PATH_ROOT, "config");
  const base =
    env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, ".config");
  return path.join(base, "goose");
}

/**
 * The module's own file: written through a temporary file and a rename
 * (which replaces a link rather than following it), 0600, only when its text
 * changes, and read back.
 */
async function writeModuleFile(file: string, text: string, detail: string): Promise<FileOutcome> {
  const before = readTextOrNull(file);
  if (before === text) return { file, action: "unchanged" };
  const skipped = (why: string): FileOutcome => ({
    file,
    action: "skipped",
    warning: `${file} could not be written (${why}), so Goose runs without the module's extensions (${detail}). Check that the module's folder is writable.`,
  });
  try {
    await mkdirPrivate(path.dirname(file));
    await writeFileAtomic(file, text, { mode: 0o600 });
  } catch (error) {
    return skipped((error as Error).message);
  }
  if (readTextOrNull(file) !== text) return skipped("reading it back gave other text");
  return { file, action: before === null ? "created" : "written", detail };
}

/**
 * Writes the module's extension entries to its own Goose config layer
 * (`layerFile`, which the launch names in GOOSE_ADDITIONAL_CONFIG_FILES) and
 * the template's system prompt to .goosehints, touching nothing else. The
 * user's config.yaml is only read by Goose, never written by the module.
 * Provider, model, mode, telemetry and keyring reach Goose through its
 * environment (buildLaunchEnv).
 */
export async function configureGoose(
  settings: Pick<GooseSettings, "appSlug" | "extensions" | "systemPrompt">,
  opts: { port: number; env: NodeJS.ProcessEnv; home: string; layerFile: string },
): Promise<GooseSetupResult> {
  const dir = gooseConfigDir(opts.env, opts.home);
  const { wanted, warnings } = moduleExtensions(opts.port, settings.appSlug, settings.extensions);
  const config = await writeModuleFile(
    opts.layerFile,
    extensionsLayer(wanted),
    `extensions: ${[...wanted.keys()].join(", ")}`,
  );

  const hintsFile = path.join(dir, ".goosehints");
  const hints = await updateUserFile(
    hintsFile,
    (text) => {
      const next = upsertHintsBlock(text, settings.systemPrompt);
      return next === (text ?? "")
        ? { kind: "unchanged" }
        : {
            kind: "write",
            text: next,
            detail: settings.systemPrompt.trim() === "" ? "system prompt removed" : "system prompt set",
          };
    },
    (reason) => `${hintsFile} was left unchanged: ${reason}. The template's system prompt does not reach Goose.`,
  );

  for (const outcome of [config, hints]) if (outcome.action === "skipped") warnings.push(outcome.warning);
  return { config, hints, warnings };
}

/** One log line for a file configureGoose handled; skipped files are reported through the warnings. */
export function describeOutcome(outcome: FileOutcome): string {
  if (outcome.action === "skipped") return `${outcome.file}: left unchanged`;
  if (outcome.action === "unchanged") return `${outcome.file}: already up to date`;
  return `${outcome.file}: ${outcome.action} (${outcome.detail})`;
}

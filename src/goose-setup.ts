import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { readOptional } from "./files.js";
import { log, warn } from "./log.js";
import { coderExtension, developerExtension, mergeGooseConfig, upsertHintsBlock } from "./goose-config.js";
import type { GooseSettings } from "./config.js";

async function writeIfChanged(file: string, content: string, before: string | null): Promise<void> {
  if (content === before) return;
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  await writeFile(partial, content, { mode: 0o600 });
  await rename(partial, file);
}

/** Goose's config folder (goose.md §2.1): GOOSE_PATH_ROOT/config when absolute, else XDG. */
export function gooseConfigDir(env: NodeJS.ProcessEnv, home: string): string {
  if (env.GOOSE_PATH_ROOT && path.isAbsolute(env.GOOSE_PATH_ROOT)) return path.join(env.GOOSE_PATH_ROOT, "config");
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, ".config");
  return path.join(base, "goose");
}

export async function configureGoose(settings: GooseSettings, opts: { port: number; env: NodeJS.ProcessEnv; home: string }): Promise<void> {
  const dir = gooseConfigDir(opts.env, opts.home);
  const configFile = path.join(dir, "config.yaml");
  const before = await readOptional(configFile);
  const managed = {
    settings: {
      GOOSE_PROVIDER: settings.provider,
      GOOSE_MODEL: settings.model,
      GOOSE_MODE: "auto",
      GOOSE_TELEMETRY_ENABLED: false,
      GOOSE_DISABLE_KEYRING: true,
    },
    extensions: { coder: coderExtension(opts.port, settings.app_slug), developer: developerExtension, ...settings.extensions },
  };
  let merged: string;
  try {
    merged = mergeGooseConfig(before, managed);
  } catch (error) {
    const kept = `${configFile}.unreadable-${Date.now()}`;
    await rename(configFile, kept);
    warn(`${configFile} could not be read as YAML (${(error as Error).message}); kept it as ${kept} and wrote a fresh one`);
    merged = mergeGooseConfig(null, managed);
  }
  await writeIfChanged(configFile, merged, before);
  log(`goose config: ${configFile} (extensions: ${Object.keys(managed.extensions).join(", ")})`);

  const hintsFile = path.join(dir, ".goosehints");
  const hintsBefore = await readOptional(hintsFile);
  const hints = upsertHintsBlock(hintsBefore, settings.system_prompt);
  if (hintsBefore !== null || hints !== "") await writeIfChanged(hintsFile, hints, hintsBefore);
}

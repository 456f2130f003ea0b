import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import clean from "semver/functions/clean.js";
import { replaceSymlink, writeFileAtomic } from "./atomic-write.js";
import { logTail, runToLog } from "./command-log.js";
import { commandPath, helperEnv, run } from "./exec.js";
import { log, StepError } from "./log.js";
import { mkdirPrivate } from "./private-dirs.js";
import { parseVersionOutput } from "./version-gate.js";

export function agentapiAsset(arch: string): string {
  const names: Record<string, string> = { x64: "amd64", arm64: "arm64" };
  const name = names[arch];
  if (!name)
    throw new StepError(
      `AgentAPI publishes no Linux build for the ${arch} architecture; install agentapi yourself and set install_agentapi = false.`,
    );
  return `agentapi-linux-${name}`;
}

export function agentapiDownloadUrl(base: string, version: string, arch: string): string {
  return `${base.replace(/\/+$/, "")}/${version}/${agentapiAsset(arch)}`;
}

export async function installedVersion(binary: string, env?: NodeJS.ProcessEnv): Promise<string | null> {
  const out = await run(binary, ["--version"], { env, timeoutMs: 20_000 });
  return out.code === 0 ? parseVersionOutput(out.stdout) : null;
}

export async function download(url: string, dest: string, attempts = 4): Promise<void> {
  let lastError = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(120_000), redirect: "follow" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      await writeFileAtomic(dest, Buffer.from(await response.arrayBuffer()), { mode: 0o755 });
      return;
    } catch (error) {
      lastError = (error as Error).message;
      if (attempt < attempts) {
        log(`download of ${url} failed (${lastError}); retrying (${attempt}/${attempts - 1})`);
        await delay(1000 * 2 ** (attempt - 1));
      }
    }
  }
  throw new StepError(
    `downloading ${url} failed ${attempts} times (last error: ${lastError}). Check the download URL variable and the workspace's network egress.`,
  );
}

/**
 * With install_agentapi = false: the agentapi on PATH, linked as
 * $MODULE_DIR/bin/agentapi, the name the CLI app runs whichever binary is used.
 */
async function linkAgentapiFromPath(binDir: string, pathValue: string): Promise<string> {
  // Not binDir: it holds the link a previous start made.
  const found = await commandPath("agentapi", pathValue);
  if (!found) {
    throw new StepError(
      "agentapi is not on PATH and install_agentapi is false. Install AgentAPI (v0.12.0 or newer for the chat history) in the workspace image, or set install_agentapi = true.",
    );
  }
  const link = path.join(binDir, "agentapi");
  if (found !== link) await replaceSymlink(link, found);
  return found;
}

/** $MODULE_DIR/bin/agentapi: the pinned AgentAPI, installed unless that version is already there, or a link to the one on PATH. */
export async function ensureAgentapi(opts: {
  install: boolean;
  version: string;
  baseUrl: string;
  binDir: string;
  pathValue: string;
}): Promise<string> {
  if (!opts.install) return linkAgentapiFromPath(opts.binDir, opts.pathValue);
  const target = path.join(opts.binDir, "agentapi");
  const wanted = clean(opts.version);
  if (wanted && (await installedVersion(target)) === wanted) {
    log(`agentapi ${wanted} already installed at ${target}`);
    return target;
  }
  await mkdirPrivate(opts.binDir);
  const url = agentapiDownloadUrl(opts.baseUrl, opts.version, process.arch);
  log(`installing agentapi ${opts.version} from ${url}`);
  const fetched = `${target}.download`;
  await download(url, fetched);
  const got = await installedVersion(fetched);
  if (got === null) {
    await rm(fetched, { force: true });
    throw new StepError(
      `the file downloaded from ${url} is not a working agentapi binary (agentapi --version failed). Check agentapi_download_url.`,
    );
  }
  await rename(fetched, target);
  log(`agentapi ${got} installed at ${target}`);
  return target;
}

async function installerTool(tool: string, pathValue: string): Promise<string> {
  const found = await commandPath(tool, pathValue);
  if (!found)
    throw new StepError(
      `the Goose installer needs '${tool}', which is not installed. Add it to the workspace image, or install goose there and set install_goose = false.`,
    );
  return found;
}

/**
 * Installs the pinned Goose with its stable installer (GOOSE_VERSION,
 * GOOSE_BIN_DIR, CONFIGURE=false) unless that version is already there.
 */
export async function ensureGoose(opts: {
  install: boolean;
  version: string;
  installerUrl: string;
  binDir: string;
  pathValue: string;
  scriptsDir: string;
  logsDir: string;
  env: NodeJS.ProcessEnv;
}): Promise<string> {
  const searchPath = `${opts.binDir}:${opts.pathValue}`;
  const existing = await commandPath("goose", searchPath);
  if (!opts.install) {
    if (!existing) {
      throw new StepError(
        "goose is not on PATH and install_goose is false. Install the Goose CLI (1.20 or newer) in the workspace image, or set install_goose = true.",
      );
    }
    return existing;
  }
  const wanted = clean(opts.version);
  if (existing && (await installedVersion(existing, opts.env)) === wanted) {
    log(`goose ${wanted} already installed at ${existing}`);
    return existing;
  }
  const bash = await installerTool("bash", opts.pathValue);
  for (const tool of ["curl", "tar", "bzip2"]) await installerTool(tool, opts.pathValue);
  const installer = path.join(opts.scriptsDir, "goose-installer.sh");
  log(`installing goose ${opts.version} with ${opts.installerUrl}`);
  await download(opts.installerUrl, installer);
  await mkdirPrivate(opts.binDir);
  const logFile = path.join(opts.logsDir, "install-goose.log");
  await writeFileAtomic(logFile, "", { mode: 0o600 });
  // The installer is the module's helper, not the user's script: no BASH_ENV.
  const code = await runToLog(bash, [installer], {
    logFile,
    cwd: opts.scriptsDir,
    env: helperEnv({
      ...opts.env,
      GOOSE_VERSION: `v${wanted ?? opts.version}`,
      GOOSE_BIN_DIR: opts.binDir,
      CONFIGURE: "false",
    }),
  });
  const installed = path.join(opts.binDir, "goose");
  const got = code === 0 ? await installedVersion(installed, opts.env) : null;
  if (got === null) {
    throw new StepError(
      `the Goose installer failed (exit ${code}). Last lines of ${logFile}:\n${await logTail(logFile)}\nCheck goose_version and goose_installer_url.`,
    );
  }
  if (got !== wanted) log(`goose reports version ${got}, not the requested ${wanted}; continuing with it`);
  log(`goose ${got} installed at ${installed}`);
  return installed;
}

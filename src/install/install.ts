import { chmod, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import clean from "semver/functions/clean.js";
import { MIN_PERSISTENCE_VERSION } from "../agentapi/version-gate.js";
import { replaceSymlink, writeFileAtomic } from "../lib/atomic-write.js";
import { logTail } from "../lib/command-log.js";
import { commandPath } from "../lib/exec.js";
import { sha256OfFile } from "../lib/files.js";
import { log, StepError, warn } from "../lib/log.js";
import { minimalEnv } from "../lib/minimal-env.js";
import { mkdirPrivate } from "../lib/private-dirs.js";
import { checkSha256, expectedSha256, type Sha256Setting } from "./checksum.js";
import { downloadFile } from "./download.js";
import { extractGoose } from "./goose-archive.js";
import { agentapiAssetUrl, gooseAssetUrl, type ReleaseArch, requireReleaseArch } from "./release-assets.js";
import { runToLog } from "./script-run.js";
import { shownUrl } from "./url-policy.js";
import type { VersionAsker } from "./version-memo.js";

/** What the start log says about an install: verified, NOT verified, or why nothing was downloaded. */
export interface Installed {
  bin: string;
  download: string;
}

/** A Goose ready to run, and the version it reported (null: `--version` failed or printed none). */
export interface InstalledGoose extends Installed {
  version: string | null;
}

/**
 * Downloads `url` to `dest` and checks its SHA-256 before anything runs or
 * unpacks it: a mismatch deletes it and fails the start, an unpinned download
 * is kept with a warning. Resolves to whether it was verified, and its digest.
 */
async function fetchChecked(opts: {
  what: string;
  url: string;
  dest: string;
  sha256: Sha256Setting;
  arch: ReleaseArch;
  env: NodeJS.ProcessEnv;
}): Promise<{ verified: boolean; sha256: string }> {
  const expected = expectedSha256(opts.sha256, opts.arch);
  const url = shownUrl(opts.url);
  log(`downloading ${opts.what} from ${url}`);
  const { sha256 } = await downloadFile(opts.url, opts.dest, opts.env);
  let verdict: { verified: boolean; message: string };
  try {
    verdict = checkSha256({ ...opts, url, variable: opts.sha256.variable, expected, actual: sha256 });
  } catch (error) {
    await rm(opts.dest, { force: true });
    throw error;
  }
  (verdict.verified ? log : warn)(verdict.message);
  return { verified: verdict.verified, sha256 };
}

function verifiedWord(verified: boolean): string {
  return verified ? "verified" : "NOT verified";
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
      `agentapi is not on PATH and install_agentapi is false. Install AgentAPI (v${MIN_PERSISTENCE_VERSION} or newer for the chat history) in the workspace image, or set install_agentapi = true.`,
    );
  }
  const link = path.join(binDir, "agentapi");
  if (found !== link) await replaceSymlink(link, found);
  return found;
}

/**
 * $MODULE_DIR/bin/agentapi: the pinned AgentAPI, installed unless that
 * version is already there, or a link to the one on PATH. With
 * agentapi_sha256 set, the installed binary is used only when its own SHA-256
 * matches the pin (the release asset is the binary itself); otherwise it is
 * downloaded again and checked.
 */
export async function ensureAgentapi(opts: {
  install: boolean;
  version: string;
  baseUrl: string;
  sha256: Sha256Setting;
  binDir: string;
  pathValue: string;
  env: NodeJS.ProcessEnv;
  versions: VersionAsker;
}): Promise<Installed> {
  if (!opts.install) {
    const bin = await linkAgentapiFromPath(opts.binDir, opts.pathValue);
    // Asked here (or recalled), beside Goose's check, for the start's
    // version gate, which would otherwise ask once the install has ended.
    await opts.versions.ask(bin);
    return { bin, download: "none (install_agentapi = false)" };
  }
  const target = path.join(opts.binDir, "agentapi");
  const wanted = clean(opts.version);
  const pinned = Object.keys(opts.sha256.pins).length > 0;
  const arch = requireReleaseArch(process.arch, "AgentAPI", "install_agentapi");
  const expected = pinned ? expectedSha256(opts.sha256, arch) : null;
  const what = `agentapi ${opts.version}`;
  if (expected !== null) {
    const actual = await sha256OfFile(target);
    const there = actual === expected ? await opts.versions.ask(target) : null;
    if (there !== null && there.version === wanted && there.output !== null) {
      log(`${what} at ${target} verified: SHA-256 ${actual} matches agentapi_sha256["${arch}"]`);
      return { bin: target, download: "verified (already installed)" };
    }
    if (actual !== null)
      log(`${target} has SHA-256 ${actual}, not agentapi_sha256["${arch}"]; downloading the pinned AgentAPI again`);
  } else if (wanted) {
    const there = await opts.versions.ask(target);
    if (there.version === wanted && there.output !== null) {
      log(`agentapi ${wanted} already installed at ${target} (NOT verified: agentapi_sha256 is empty)`);
      return { bin: target, download: "none (already installed)" };
    }
  }
  await mkdirPrivate(opts.binDir);
  const url = agentapiAssetUrl(opts.baseUrl, opts.version, arch);
  const fetched = `${target}.download`;
  const { verified } = await fetchChecked({ what, url, dest: fetched, sha256: opts.sha256, arch, env: opts.env });
  try {
    await chmod(fetched, 0o755);
    const got = await opts.versions.ask(fetched);
    if (got.version === null || got.output === null)
      throw new StepError(
        `the file downloaded from ${shownUrl(url)} is not a working agentapi binary (agentapi --version failed). Check agentapi_download_url.`,
      );
    await rename(fetched, target);
    await opts.versions.renamed(fetched, target);
    log(`agentapi ${got.version} installed at ${target}`);
    return { bin: target, download: verifiedWord(verified) };
  } catch (error) {
    await rm(fetched, { force: true });
    throw error;
  }
}

async function requiredTool(tool: string, pathValue: string, purpose: string): Promise<string> {
  const found = await commandPath(tool, pathValue);
  if (!found)
    throw new StepError(
      `${purpose} needs '${tool}', which is not installed. Add it to the workspace image, or install goose there and set install_goose = false.`,
    );
  return found;
}

interface GooseInstall {
  version: string;
  downloadUrl: string;
  installerUrl: string;
  sha256: Sha256Setting;
  /** Where the goose binary goes: ~/.local/bin, where Goose's own installer puts it. */
  binDir: string;
  /** The module's private folder for the downloaded archive. */
  workDir: string;
  pathValue: string;
  scriptsDir: string;
  logsDir: string;
  env: NodeJS.ProcessEnv;
  versions: VersionAsker;
}

/**
 * Goose from its release tarball, checked, then unpacked with tar into
 * <binDir>/goose. With `keep`, a verified tarball stays at that path, and a
 * later start unpacks it again instead of downloading while its SHA-256 still
 * matches the pin.
 */
async function installGooseRelease(
  opts: GooseInstall,
  keep: string | null,
): Promise<{ file: string; verified: boolean; sha256: string }> {
  const tar = await requiredTool("tar", opts.pathValue, "unpacking Goose's release (.tar.bz2)");
  await requiredTool("bzip2", opts.pathValue, "unpacking Goose's release (.tar.bz2)");
  const arch = requireReleaseArch(process.arch, "Goose", "install_goose");
  const url = gooseAssetUrl(opts.downloadUrl, opts.version, arch);
  await mkdirPrivate(opts.workDir);
  const what = `goose ${opts.version}`;
  const kept = keep === null ? null : await sha256OfFile(keep);
  let archive = path.join(opts.workDir, "goose.tar.bz2.download");
  let checked: { verified: boolean; sha256: string };
  if (keep !== null && kept !== null && kept === expectedSha256(opts.sha256, arch)) {
    log(`${what}: unpacking the tarball kept at ${keep} again; its SHA-256 ${kept} matches goose_sha256["${arch}"]`);
    archive = keep;
    checked = { verified: true, sha256: kept };
  } else {
    checked = await fetchChecked({ what, url, dest: archive, sha256: opts.sha256, arch, env: opts.env });
  }
  await mkdirPrivate(opts.binDir);
  const file = path.join(opts.binDir, `.goose.${process.pid}.download`);
  try {
    await extractGoose({ tar, archive, dest: file, source: shownUrl(url), env: opts.env });
  } finally {
    if (keep !== null && checked.verified) await rename(archive, keep);
    else await rm(archive, { force: true });
  }
  // open(2)'s mode went through the umask; goose is run by the user's other tools too.
  await chmod(file, 0o755).catch(async (error) => {
    await rm(file, { force: true });
    throw error;
  });
  return { file, ...checked };
}

/**
 * Goose with a goose_installer_url installer (GOOSE_VERSION, GOOSE_BIN_DIR,
 * CONFIGURE=false). It downloads by itself, so nothing it installs can be
 * verified; it runs with a minimal environment, without the agent's token.
 */
async function installGooseWithInstaller(opts: GooseInstall): Promise<void> {
  const purpose = "goose_installer_url's installer";
  const bash = await requiredTool("bash", opts.pathValue, purpose);
  for (const tool of ["curl", "tar", "bzip2"]) await requiredTool(tool, opts.pathValue, purpose);
  const installer = path.join(opts.scriptsDir, "goose-installer.sh");
  log(`downloading the Goose installer from ${shownUrl(opts.installerUrl)}`);
  await downloadFile(opts.installerUrl, installer, opts.env);
  warn(
    `goose ${opts.version} is installed by ${shownUrl(opts.installerUrl)}, which downloads Goose by itself: the download is NOT verified. Serve Goose's release tarball at goose_download_url instead, and set goose_sha256, to verify it.`,
  );
  await mkdirPrivate(opts.binDir);
  const logFile = path.join(opts.logsDir, "install-goose.log");
  await writeFileAtomic(logFile, "", { mode: 0o600 });
  const code = await runToLog(bash, [installer], {
    logFile,
    cwd: opts.scriptsDir,
    env: minimalEnv(opts.env, {
      GOOSE_VERSION: `v${opts.version}`,
      GOOSE_BIN_DIR: opts.binDir,
      CONFIGURE: "false",
    }),
  });
  if (code !== 0)
    throw new StepError(
      `the Goose installer failed (exit ${code}). Last lines of ${logFile}:\n${await logTail(logFile)}\nCheck goose_version and goose_installer_url.`,
    );
}

// goose_sha256 pins the release tarball, not the binary in it, so an
// installed goose is checked against what the module unpacked from a tarball
// that matched the pin: this record, in the module's private folder. The
// workspace user, and so Goose's tool calls, can rewrite both the binary and
// the record, which only matters where Goose is confined: without
// agent_firewall, a goose forged so runs nothing that Goose could not already
// run as the same user. With agent_firewall the record is not used: the start
// unpacks goose again, every time, from the tarball it verified, kept beside
// the record and checked against the pin first (docs/operations.md gives the cost).
const GOOSE_RECORD = "goose-verified.json";
const GOOSE_TARBALL = "goose-verified.tar.bz2";

interface GooseRecord {
  /** The goose the module unpacked and installed. */
  binary: string;
  /** Its SHA-256. */
  sha256: string;
  /** The SHA-256 of the tarball it came from, which matched goose_sha256. */
  tarball_sha256: string;
}

async function readGooseRecord(file: string): Promise<Partial<GooseRecord> | null> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as Partial<GooseRecord>;
  } catch {
    return null;
  }
}

/**
 * Installs the pinned Goose unless that version is already there: its
 * release tarball, or goose_installer_url's installer when set. With
 * goose_sha256 set, a goose already there is used only when it is the one
 * the module unpacked from a tarball matching the pin, unchanged since; any
 * other goose on PATH is not run, and the pinned one is installed.
 */
export async function ensureGoose(
  opts: GooseInstall & {
    install: boolean /** agent_firewall is set: never trust the record (above). */;
    confined: boolean;
  },
): Promise<InstalledGoose> {
  const searchPath = `${opts.binDir}:${opts.pathValue}`;
  const existing = await commandPath("goose", searchPath);
  if (!opts.install) {
    if (!existing) {
      throw new StepError(
        "goose is not on PATH and install_goose is false. Install the Goose CLI (1.34 or newer) in the workspace image, or set install_goose = true.",
      );
    }
    // Asked only for the start log's version line: a Goose baked into the image is run whatever it says.
    return {
      bin: existing,
      download: "none (install_goose = false)",
      version: (await opts.versions.ask(existing)).version,
    };
  }
  const wanted = clean(opts.version) ?? opts.version;
  const installed = path.join(opts.binDir, "goose");
  const recordFile = path.join(opts.workDir, GOOSE_RECORD);
  const pinned = opts.installerUrl === "" && Object.keys(opts.sha256.pins).length > 0;
  const keep = pinned && opts.confined ? path.join(opts.workDir, GOOSE_TARBALL) : null;
  if (pinned && keep === null) {
    const arch = requireReleaseArch(process.arch, "Goose", "install_goose");
    const expected = expectedSha256(opts.sha256, arch);
    const record = await readGooseRecord(recordFile);
    const actual = record?.binary === installed ? await sha256OfFile(installed) : null;
    if (
      actual !== null &&
      actual === record?.sha256 &&
      record.tarball_sha256 === expected &&
      (await opts.versions.ask(installed)).version === wanted
    ) {
      log(
        `goose ${wanted} at ${installed} verified: SHA-256 ${actual}, as unpacked from the tarball that matched goose_sha256["${arch}"]`,
      );
      return { bin: installed, download: "verified (already installed)", version: wanted };
    }
    if (existing)
      log(
        `${existing} is not the goose this module unpacked from a tarball matching goose_sha256["${arch}"], so it is not used; installing the pinned Goose`,
      );
  } else if (!pinned && existing && (await opts.versions.ask(existing)).version === wanted) {
    log(`goose ${wanted} already installed at ${existing} (NOT verified: goose_sha256 is empty)`);
    return { bin: existing, download: "none (already installed)", version: wanted };
  }
  await rm(recordFile, { force: true });
  let candidate = installed;
  let download = "NOT verified (goose_installer_url)";
  let tarball: string | null = null;
  if (opts.installerUrl === "") {
    const release = await installGooseRelease({ ...opts, version: wanted }, keep);
    candidate = release.file;
    download = verifiedWord(release.verified);
    if (release.verified) tarball = release.sha256;
  } else {
    await installGooseWithInstaller({ ...opts, version: wanted });
  }
  const got = (await opts.versions.ask(candidate)).version;
  if (got === null) {
    if (candidate !== installed) await rm(candidate, { force: true });
    throw new StepError(
      `the installed goose does not run (goose --version failed). Check goose_version and ${opts.installerUrl === "" ? "goose_download_url" : "goose_installer_url"}.`,
    );
  }
  const binarySha256 = tarball === null ? null : await sha256OfFile(candidate);
  if (candidate !== installed) {
    await rename(candidate, installed).catch(async (error) => {
      await rm(candidate, { force: true });
      throw error;
    });
    await opts.versions.renamed(candidate, installed);
  }
  if (tarball !== null && binarySha256 !== null) {
    const record: GooseRecord = { binary: installed, sha256: binarySha256, tarball_sha256: tarball };
    await writeFileAtomic(recordFile, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  }
  if (got !== wanted) log(`goose reports version ${got}, not the requested ${wanted}; continuing with it`);
  log(`goose ${got} installed at ${installed}`);
  return { bin: installed, download, version: got };
}

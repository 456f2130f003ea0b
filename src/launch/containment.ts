import { readFileSync } from "node:fs";
import { lstat, readlink } from "node:fs/promises";
import path from "node:path";
import { commandPath } from "../lib/exec.js";
import { sha256OfFile } from "../lib/files.js";
import { StepError } from "../lib/log.js";

// With agent_firewall, what confines Goose is a handful of files: the
// firewall's command or wrapper, its config, the program the wrapper runs,
// and the binaries a launch runs (AgentAPI starts the firewall; goose runs
// inside it, and its session helpers outside). Goose's tool calls run as the
// workspace user, so they can rewrite every one of these that the user can
// write, and the next launch would run what they now hold. The start
// measures them. Only a file that root owns, in folders only root can write,
// cannot change behind the start's back: it is recognised as such and not
// hashed, and the supervisor runs them only when all are such
// (supervisorRefusals). It keeps the measurements in its settings, which live
// in its own memory (an environment variable the start gives it), not in a
// file, and each restart measures again and refuses to launch on any change.

/** One file a launch depends on, as measured: "root" (only root can change it), "missing", or its SHA-256. */
export interface Measured {
  role: string;
  path: string;
  state: string;
}

export const ROOT_ONLY = "root";
export const RUNTIME_ROLE = "the runtime";
const MISSING = "missing";
const MAX_WRAPPER_BYTES = 64 * 1024;
const MAX_LINK_HOPS = 40;

/** Whether root alone can change this entry: root's, and not writable by group or others. */
function onlyRootWrites(entry: { uid: number; mode: number }): boolean {
  return entry.uid === 0 && (entry.mode & 0o022) === 0;
}

/** What rootOnly needs of an lstat(2) answer. */
interface Entry {
  uid: number;
  mode: number;
  isSymbolicLink(): boolean;
  isDirectory(): boolean;
  isFile(): boolean;
}

/** What rootOnly reads of the filesystem: lstat(2) and readlink(2), without following a link. */
export interface EntryReader {
  lstat(file: string): Promise<Entry>;
  readlink(file: string): Promise<string>;
}

const FILESYSTEM: EntryReader = { lstat, readlink };

/**
 * True when nobody but root can change what `file` names: every folder on the
 * way, every link followed (each link's folder included), and the file
 * itself are root's and writable by root alone. Never when this process is
 * root: then root's files are the workspace user's.
 */
export async function rootOnly(file: string, uid: number, fs: EntryReader = FILESYSTEM, hops = 0): Promise<boolean> {
  if (uid === 0 || hops > MAX_LINK_HOPS) return false;
  const parts = path.resolve(file).split("/").filter(Boolean);
  let at = "/";
  try {
    if (!onlyRootWrites(await fs.lstat(at))) return false;
    for (const [i, part] of parts.entries()) {
      const next = path.join(at, part);
      const entry = await fs.lstat(next);
      if (entry.isSymbolicLink()) {
        // A link's own mode means nothing; its owner and its folder (checked) do.
        if (entry.uid !== 0) return false;
        const target = path.resolve(at, await fs.readlink(next));
        return rootOnly(path.join(target, ...parts.slice(i + 1)), uid, fs, hops + 1);
      }
      if (!onlyRootWrites(entry)) return false;
      if (i < parts.length - 1 && !entry.isDirectory()) return false;
      at = next;
    }
    return (await fs.lstat(at)).isFile();
  } catch {
    return false;
  }
}

/**
 * The program a wrapper script execs, in the two shapes the agent-firewall
 * module writes (registry/coder/modules/agent-firewall/scripts/install.sh.tftpl
 * @ 6be121e4): `exec agent-firewall "$@"` and `exec "${SCRIPT_DIR}/coder-no-caps" boundary "$@"`,
 * and an absolute path. Null for anything else, whose target is unknown.
 */
export function wrapperTarget(text: string, wrapperDir: string): string | null {
  for (const line of text.split("\n")) {
    const word = /^\s*exec\s+("[^"]*"|'[^']*'|[^\s"'`;|&]+)/.exec(line)?.[1];
    if (word === undefined) continue;
    const bare = word.replace(/^["']|["']$/g, "").replace(/^\$\{?SCRIPT_DIR\}?\//, `${wrapperDir}/`);
    if (bare !== "" && !/[$`\\*?[]/.test(bare)) return bare;
  }
  return null;
}

/** The config files a firewall prefix names (`--config=FILE` or `--config FILE`, before its `--`). */
export function configFiles(prefix: string[]): string[] {
  const found: string[] = [];
  for (let i = 1; i < prefix.length && prefix[i] !== "--"; i++) {
    const arg = prefix[i] as string;
    if (arg.startsWith("--config=")) found.push(arg.slice("--config=".length));
    else if (arg === "--config" && prefix[i + 1] !== undefined) found.push(prefix[++i] as string);
  }
  return found.filter((file) => file !== "");
}

async function wrapperText(file: string): Promise<string | null> {
  try {
    const text = readFileSync(file, "utf8");
    return text.length <= MAX_WRAPPER_BYTES && text.startsWith("#!") ? text : null;
  } catch {
    return null;
  }
}

/**
 * What a launch depends on. With a firewall prefix: the firewall's command
 * (the agent-firewall module's wrapper, or the `command` form's program), its
 * config, the program the wrapper execs, AgentAPI and goose, which run
 * outside it and start it, and the runtime. Without one: the binaries a pin covers, so that a
 * supervisor's restart runs what the start verified.
 */
export async function containmentFiles(opts: {
  prefix: string[];
  agentapi: string;
  goose: string;
  /** What runs the module's scripts: the supervisor runs it outside the firewall for each restart and save. */
  runtime: string;
  pathValue: string;
  pinned: { agentapi: boolean; goose: boolean };
}): Promise<{ role: string; path: string }[]> {
  const files: { role: string; path: string }[] = [];
  const first = opts.prefix[0];
  if (first !== undefined) {
    const command = (await commandPath(first, opts.pathValue)) ?? first;
    files.push({ role: "the firewall command", path: command });
    for (const config of configFiles(opts.prefix)) files.push({ role: "the firewall's config", path: config });
    const text = await wrapperText(command);
    const target = text === null ? null : wrapperTarget(text, path.dirname(command));
    if (target !== null)
      files.push({
        role: "the program the firewall wrapper runs",
        path: (await commandPath(target, opts.pathValue)) ?? target,
      });
  }
  if (first !== undefined || opts.pinned.agentapi) files.push({ role: "agentapi", path: opts.agentapi });
  if (first !== undefined || opts.pinned.goose) files.push({ role: "goose", path: opts.goose });
  if (first !== undefined) files.push({ role: RUNTIME_ROLE, path: opts.runtime });
  return files;
}

/** Each file's state now: owned by root alone, its SHA-256, or missing. */
export async function measure(files: { role: string; path: string }[], uid: number): Promise<Measured[]> {
  const measured: Measured[] = [];
  for (const file of files) {
    const state = (await rootOnly(file.path, uid)) ? ROOT_ONLY : ((await sha256OfFile(file.path)) ?? MISSING);
    measured.push({ ...file, state });
  }
  return measured;
}

const described = (state: string) =>
  state === ROOT_ONLY ? "owned by root" : state === MISSING ? "missing" : `SHA-256 ${state}`;

/** What changed between the start's measurements and now, one phrase per file; empty when nothing did. */
export function containmentChanges(verified: Measured[], now: Measured[]): string[] {
  const changes: string[] = [];
  for (const before of verified) {
    const after = now.find((m) => m.role === before.role && m.path === before.path);
    const state = after?.state ?? MISSING;
    if (state !== before.state)
      changes.push(
        `${before.role} ${before.path} was ${described(before.state)} at the start, now ${described(state)}`,
      );
  }
  return changes;
}

/** A launch that must not happen: what confines Goose, or a pinned binary, changed since the start verified it. */
export class ContainmentChanged extends StepError {}

/**
 * At a supervisor's restart: measures the start's files again and throws,
 * naming each change, before anything of them runs.
 */
export async function checkContainment(verified: Measured[], uid: number): Promise<void> {
  if (verified.length === 0) return;
  const changes = containmentChanges(verified, await measure(verified, uid));
  if (changes.length > 0)
    throw new ContainmentChanged(
      `Check what changed, then restart the workspace: Goose was not relaunched, because files the start verified changed since: ${changes.join("; ")}. If nobody meant to change them, Goose or a command it ran did (see the README's AI governance section).`,
    );
}

const writablePaths = (measured: Measured[]) => measured.filter((m) => m.state !== ROOT_ONLY).map((m) => m.path);

/** The start's line about files the workspace user, and so Goose's tool calls, can rewrite. */
export function writableWarning(measured: Measured[]): string | null {
  const writable = writablePaths(measured);
  if (writable.length === 0) return null;
  return `agent_firewall: ${writable.join(", ")} can be rewritten by the workspace user, and so by Goose's tool calls: the supervisor will not relaunch Goose, and the next start runs what they hold then. Make them root's (README, AI governance) to make the firewall hold.`;
}

/** What the supervisor must not do once Goose has run, and why; "" where it may. */
export interface SupervisorRefusals {
  restart: string;
  autosave: string;
}

/**
 * With a firewall, a supervisor's restart runs the measured files outside it
 * (AgentAPI, goose's session commands, the firewall's own), and its autosave
 * runs the runtime. A file the workspace user can write cannot be checked
 * and then run: Goose's tool calls run as that user, so one can change it
 * after any check (a rename between the hash and the exec), and a copy or an
 * open descriptor of the module's is that user's too (/proc/<pid>/fd). Only
 * root's files hold still, so only with them does the supervisor run anything.
 */
export function supervisorRefusals(measured: Measured[], firewalled: boolean): SupervisorRefusals {
  if (!firewalled) return { restart: "", autosave: "" };
  const writable = writablePaths(measured);
  const runtime = measured.find((m) => m.role === RUNTIME_ROLE && m.state !== ROOT_ONLY);
  return {
    restart:
      writable.length === 0
        ? ""
        : `Restart the workspace to bring Goose back, and make ${writable.join(", ")} root's (README, AI governance) for the supervisor to relaunch it: with agent_firewall it runs only root's files, which no command Goose ran can change between its check and the launch`,
    autosave:
      runtime === undefined
        ? ""
        : `the runtime ${runtime.path}, which the autosave runs outside the Agent Firewall, can be rewritten by the workspace user; make it root's to have the chat saved after every turn`,
  };
}

import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import { $, type Options } from "zx/core";
import { openLog } from "./command-log.js";
import { signal } from "./processes.js";

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The whole run, output included; past it the process group is killed. */
  timeoutMs?: number;
  /** Per stream; past it the process group is killed and the output cut there. */
  maxBytes?: number;
}

export interface RunResult {
  /** null when the process was killed by a signal or never started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  /** Why the process could not be started (ENOENT, EACCES, ...). */
  error?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BYTES = 1024 * 1024;

// bash runs the file named by BASH_ENV before any non-interactive script, and
// sh (POSIX) the one named by ENV ("Bash Startup Files", bash manual; POSIX
// sh, "ENV"). A helper that happens to be a shell script, such as a wrapper
// installed as `goose`, would otherwise still run the user's file.
const STARTUP_FILE_VARIABLES = ["BASH_ENV", "ENV"];

/** The environment a helper gets: the caller's, minus the variables that make a shell run a user's startup file. */
export function helperEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !STARTUP_FILE_VARIABLES.includes(key)) out[key] = value;
  }
  return out;
}

/**
 * POSIX single quotes: the text stays one word and nothing in it is expanded.
 * zx's own quote writes bash's $'...', which a POSIX sh such as dash reads as
 * a literal '$' followed by the quoted text.
 */
export function shellQuote(value: string): string {
  if (value.includes("\0")) throw new Error("an argument contains a NUL byte, which no program can receive");
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function killGroup(pid: number | undefined): void {
  // A failure is ESRCH: every process of the group has already gone.
  if (pid !== undefined) signal(-pid, "SIGKILL");
}

/**
 * A store for zx's output chunks (an array, as zx reads its last element)
 * that keeps a stream's output up to `maxBytes` and calls `full` once there
 * is more.
 */
function cappedStore(maxBytes: number, full: () => void): Buffer[] {
  const chunks: Buffer[] = [];
  let size = 0;
  chunks.push = (chunk: Buffer) => {
    const kept = chunk.subarray(0, Math.max(0, maxBytes - size));
    size += kept.length;
    if (kept.length < chunk.length) full();
    return Array.prototype.push.call(chunks, kept);
  };
  return chunks;
}

/**
 * zx's `$` for the module's commands, which are written `exec <program> <args>`
 * so that the program replaces the shell (its PID, exit code and signal are
 * the program's): /bin/sh, which reads no startup file when not interactive
 * (bash, zx's default, would read ~/.bashrc with the socket stdin Node gives a
 * child), every interpolated word quoted by shellQuote, no `set -euo pipefail`
 * prefix (not POSIX), stdin closed, and a non-zero exit resolved, not thrown.
 * Every setting zx would otherwise take from ZX_* variables of the
 * environment (resolveDefaults in zx's core) is given here.
 */
export function moduleShell(options: Partial<Options> & { env: NodeJS.ProcessEnv; cwd: string }) {
  return $({
    shell: "/bin/sh",
    prefix: "",
    postfix: "",
    quote: shellQuote,
    stdio: ["ignore", "pipe", "pipe"],
    detached: false,
    nothrow: true,
    quiet: true,
    verbose: false,
    preferLocal: false,
    timeout: 0,
    ...options,
  });
}

/**
 * Runs a program through moduleShell, without BASH_ENV and ENV, and returns
 * what it printed.
 *
 * The child leads its own process group, so everything it starts can be ended
 * with it: when it exits, whatever is left in the group is killed (a helper
 * that leaves a background child holding its stdout open would otherwise keep
 * the run waiting), and on timeout or too much output the whole group is.
 * zx's own kill would first list the process tree with `ps`; a group signal
 * needs no helper. Only the module's short-lived queries run here; SQLite's
 * journal makes a killed reader or migrator safe.
 */
export async function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env = helperEnv(options.env ?? process.env);
  const cwd = options.cwd ?? process.cwd();
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  // The shell would report a missing program as exit 127 with a message in
  // its own words; spawn's lookup along the child's PATH is kept instead.
  const resolved = await commandPath(file, env.PATH);
  if (resolved === null)
    return {
      code: null,
      signal: null,
      stdout: "",
      stderr: "",
      timedOut: false,
      truncated: false,
      error: `${file}: ENOENT (not found, or not an executable file)`,
    };
  let timedOut = false;
  let truncated = false;
  let pid: number | undefined;
  const overflow = () => {
    if (!truncated) killGroup(pid);
    truncated = true;
  };
  const stdout = cappedStore(maxBytes, overflow);
  const stderr = cappedStore(maxBytes, overflow);
  // zx keeps every chunk once more, interleaved; nothing here reads that copy.
  const stdall: Buffer[] = [];
  stdall.push = () => 0;
  const shell = moduleShell({
    env,
    cwd,
    detached: true,
    store: { stdout, stderr, stdall },
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    timeoutSignal: "SIGKILL",
    killSignal: "SIGKILL",
    kill: async (target: number | string) => {
      timedOut = true;
      killGroup(Number(target));
      // A process that left the group (setsid) may still hold the pipes.
      child.stdout?.destroy();
      child.stderr?.destroy();
    },
  });
  const running = shell`exec ${resolved} ${args}`;
  const child = running.child as NonNullable<typeof running.child>;
  pid = child.pid;
  child.once("exit", () => killGroup(pid));
  const output = await running;
  const error = output.cause ?? undefined;
  return {
    code: output.exitCode,
    signal: output.signal,
    stdout: Buffer.concat(stdout).toString("utf8"),
    stderr: Buffer.concat(stderr).toString("utf8"),
    timedOut,
    truncated,
    ...(error ? { error: error.message } : {}),
  };
}

/** Runs a command through moduleShell, its output appended to a log file; resolves to the exit code. */
export async function runToLog(
  command: string,
  args: string[],
  opts: { logFile: string; cwd: string; env: NodeJS.ProcessEnv },
): Promise<number> {
  const out = await openLog(opts.logFile);
  try {
    const shell = moduleShell({ cwd: opts.cwd, env: opts.env, stdio: ["ignore", out.fd, out.fd] });
    const output = await shell`exec ${command} ${args}`;
    return output.exitCode ?? (output.signal ? 128 : 1);
  } finally {
    await out.close();
  }
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where a command would be found: a name with a slash is taken as a path,
 * anything else is looked up along PATH. Empty and relative PATH entries are
 * skipped; they would make the answer depend on the current folder.
 */
export async function commandPath(
  name: string,
  pathValue: string | undefined = process.env.PATH,
): Promise<string | null> {
  if (name === "") return null;
  if (name.includes("/")) return (await isExecutableFile(name)) ? path.resolve(name) : null;
  for (const dir of (pathValue ?? "").split(":")) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}

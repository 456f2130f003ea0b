import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
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

function killGroup(pid: number | undefined): void {
  // A failure is ESRCH: every process of the group has already gone.
  if (pid !== undefined) signal(-pid, "SIGKILL");
}

/** A stream's output up to `maxBytes`; `add` reports whether the chunk fit whole. */
function cappedOutput(maxBytes: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk: Buffer): boolean {
      const kept = chunk.subarray(0, Math.max(0, maxBytes - size));
      size += kept.length;
      chunks.push(kept);
      return kept.length === chunk.length;
    },
    text: () => Buffer.concat(chunks).toString("utf8"),
  };
}

/**
 * Runs a program, without BASH_ENV and ENV, and returns what it printed. No
 * shell comes between: the arguments reach the program as they are, and a
 * program that is a shell script reads no startup file of the user's.
 *
 * The child leads its own process group, so everything it starts can be ended
 * with it: when it exits, whatever is left in the group is killed (a helper
 * that leaves a background child holding its stdout open would otherwise keep
 * the run waiting), and on timeout or too much output the whole group is.
 * Only the module's short-lived queries run here; SQLite's journal makes a
 * killed reader or migrator safe.
 */
export async function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env = helperEnv(options.env ?? process.env);
  const cwd = options.cwd ?? process.cwd();
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  // spawn's lookup along the child's PATH, as exec would do it, with a
  // message of the module's own for a program that is not there.
  const resolved = await commandPath(file, env.PATH);
  const result: RunResult = { code: null, signal: null, stdout: "", stderr: "", timedOut: false, truncated: false };
  if (resolved === null) return { ...result, error: `${file}: ENOENT (not found, or not an executable file)` };
  return new Promise((resolve) => {
    const child = spawn(resolved, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const stdout = cappedOutput(maxBytes);
    const stderr = cappedOutput(maxBytes);
    // A process that left the group (setsid) may still hold the pipes.
    const end = () => {
      killGroup(child.pid);
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const keep = (output: typeof stdout) => (chunk: Buffer) => {
      if (output.add(chunk) || result.truncated) return;
      result.truncated = true;
      end();
    };
    child.stdout.on("data", keep(stdout));
    child.stderr.on("data", keep(stderr));
    const timer = setTimeout(() => {
      result.timedOut = true;
      end();
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    child.once("exit", () => killGroup(child.pid));
    let settled = false;
    const settle = (outcome: Partial<RunResult>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, ...outcome, stdout: stdout.text(), stderr: stderr.text() });
    };
    child.once("error", (error) => settle({ error: error.message }));
    child.once("close", (code, signal) => settle({ code, signal }));
  });
}

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
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
  if (name.includes("/")) return isExecutableFile(name) ? path.resolve(name) : null;
  for (const dir of (pathValue ?? "").split(":")) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

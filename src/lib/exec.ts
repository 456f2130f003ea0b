import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
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

/**
 * Runs a program directly (no shell, so no ~/.bashrc, BASH_ENV or quoting),
 * with stdin closed, and returns what it printed.
 *
 * The child leads its own process group, so everything it starts can be ended
 * with it: when it exits, whatever is left in the group is killed (a helper
 * that leaves a background child holding its stdout open would otherwise keep
 * the run waiting), and on timeout or too much output the whole group is.
 * Only the module's short-lived queries run here; SQLite's journal makes a
 * killed reader or migrator safe.
 */
export function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: helperEnv(options.env ?? process.env),
      stdio: ["ignore", "pipe", "pipe"],
      shell: false,
      detached: true,
    });
    const chunks: Record<"stdout" | "stderr", Buffer[]> = { stdout: [], stderr: [] };
    const sizes = { stdout: 0, stderr: 0 };
    let code: number | null = null;
    let signal: NodeJS.Signals | null = null;
    let timedOut = false;
    let truncated = false;
    let settled = false;

    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(chunks.stdout).toString("utf8"),
        stderr: Buffer.concat(chunks.stderr).toString("utf8"),
        timedOut,
        truncated,
        ...(error === undefined ? {} : { error }),
      });
    };

    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
      // A process that left the group (setsid) may still hold the pipes.
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish();
    }, timeoutMs);

    for (const name of ["stdout", "stderr"] as const) {
      child[name]?.on("data", (chunk: Buffer) => {
        const room = Math.max(0, maxBytes - sizes[name]);
        const kept = chunk.subarray(0, room);
        chunks[name].push(kept);
        sizes[name] += kept.length;
        if (kept.length < chunk.length && !truncated) {
          truncated = true;
          killGroup(child.pid);
        }
      });
    }

    child.once("error", (error) => {
      killGroup(child.pid);
      finish(error.message);
    });
    child.once("exit", (exitCode, exitSignal) => {
      code = exitCode;
      signal = exitSignal;
      killGroup(child.pid);
    });
    child.once("close", () => finish());
  });
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

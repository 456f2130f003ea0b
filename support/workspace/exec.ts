import { spawn } from "node:child_process";
import { pollUntil } from "../../src/poll.js";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export function run(
  command: string,
  args: string[],
  opts: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
    input?: string;
    /** Called with the whole stdout so far each time more arrives, to act while the command runs. */
    onStdout?: (stdout: string) => void;
  } = {},
): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
      opts.onStdout?.(stdout);
    });
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
    child.on("error", reject);
    // "close", not "exit": a script that leaves a child holding its output
    // would keep the Coder agent waiting, and keeps this promise waiting too.
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, ms: Date.now() - started });
    });
    // A script that exits before reading its input closes the pipe.
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
  });
}

/** Polls (no fixed sleeps) until `check` is truthy; an error naming `what` once the bound passes. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const result = await pollUntil(async () => (await check()) || undefined, { timeoutMs, intervalMs: 50 });
  if ("value" in result) return result.value;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

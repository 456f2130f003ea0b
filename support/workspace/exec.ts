import { setTimeout as delay } from "node:timers/promises";
import { execa } from "execa";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs a command directly (no shell) with exactly `env` (the caller's whole
 * environment by default), and resolves with its outcome, failed or not; a
 * command that cannot be started rejects. Past the timeout it is killed with
 * SIGKILL. The result waits for the output pipes to close, not only for the
 * exit: a script that leaves a child holding its output would keep the Coder
 * agent waiting, and keeps this promise waiting too.
 */
export async function run(
  command: string,
  args: string[],
  opts: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    timeoutMs?: number;
    input?: string;
    /** Called with the whole stdout so far each time more arrives, to act while the command runs. */
    onStdout?: (stdout: string) => void;
    /** Another user to run it as (this process must be root). */
    user?: { uid: number; gid: number };
  } = {},
): Promise<RunResult> {
  const started = Date.now();
  const subprocess = execa(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    extendEnv: false,
    input: opts.input ?? "",
    timeout: opts.timeoutMs ?? 120_000,
    killSignal: "SIGKILL",
    reject: false,
    stripFinalNewline: false,
    uid: opts.user?.uid,
    gid: opts.user?.gid,
  });
  let stdout = "";
  subprocess.stdout.on("data", (d) => {
    stdout += d;
    opts.onStdout?.(stdout);
  });
  const result = await subprocess;
  if (result.exitCode === undefined && result.signal === undefined) throw result.cause ?? result;
  return {
    code: result.exitCode ?? 128,
    stdout: String(result.stdout ?? ""),
    stderr: String(result.stderr ?? ""),
    ms: Date.now() - started,
  };
}

/**
 * Calls `check` every `intervalMs` until it returns a value or `timeoutMs`
 * passes: the harness's own loop, not the module's (src/lib/poll.ts), so a
 * defect there cannot hide in what a test waits for.
 */
export async function pollUntil<T>(
  check: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs: number },
): Promise<{ value: T } | { timedOut: true }> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return { value };
    const left = deadline - Date.now();
    if (left <= 0) return { timedOut: true };
    await delay(Math.min(opts.intervalMs, left));
  }
}

/** The last `lines` lines of a command's output, for an error message. */
export function tail(text: string, lines = 20): string {
  return text.replace(/\s+$/, "").split("\n").slice(-lines).join("\n");
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

import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, writeSync } from "node:fs";
import { openLog } from "./command-log.js";

/**
 * Starts a program that outlives this script: in its own session, so it
 * leaves the Coder agent's process group; stdin /dev/null (AgentAPI reads a
 * non-terminal stdin to its end before it starts); its output appended to
 * `logFile` (which only the supervisor rotates, supervisor/supervisor.sh),
 * never to this script's pipes, which the Coder agent waits for.
 * `firstLine` goes into the log before it.
 *
 * This is the one place the module starts a process it leaves running;
 * lib/exec.ts runs a program to its end and gives, at the child's exit, its
 * output, its status and its timeout, none of which a program left running
 * has.
 */
export async function startDetached(
  file: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; logFile: string; firstLine?: string },
): Promise<ChildProcess> {
  const out = openLog(opts.logFile);
  try {
    if (opts.firstLine !== undefined) writeSync(out, opts.firstLine);
    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ["ignore", out, out],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    return child;
  } finally {
    closeSync(out);
  }
}

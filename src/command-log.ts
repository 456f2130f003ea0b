import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { type FileHandle, open, readFile } from "node:fs/promises";

export function tail(text: string, lines = 20): string {
  const all = text.replace(/\s+$/, "").split("\n");
  return all.slice(-lines).join("\n");
}

/** The last lines of a log, for an error message; "(no log)" when it cannot be read. */
export async function logTail(file: string, lines = 20): Promise<string> {
  try {
    return tail(await readFile(file, "utf8"), lines);
  } catch {
    return "(no log)";
  }
}

/** Opens a log for appending, created 0600, never through a link planted at its name. */
export function openLog(file: string): Promise<FileHandle> {
  return open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
}

/** Runs a command, without a shell, with stdin closed and its output appended to a log file; resolves to the exit code. */
export async function runToLog(
  command: string,
  args: string[],
  opts: { logFile: string; cwd: string; env: NodeJS.ProcessEnv },
): Promise<number> {
  const out = await openLog(opts.logFile);
  try {
    return await new Promise<number>((resolve, reject) => {
      const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", out.fd, out.fd] });
      child.on("error", reject);
      child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    });
  } finally {
    await out.close();
  }
}

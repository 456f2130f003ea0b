import { constants } from "node:fs";
import { open, readFile } from "node:fs/promises";
import path from "node:path";
import { spawn } from "node:child_process";
import { StepError, log } from "./log.js";
import { writeFileAtomic } from "./safe-fs.js";

export function tail(text: string, lines = 20): string {
  const all = text.replace(/\s+$/, "").split("\n");
  return all.slice(-lines).join("\n");
}

export async function logTail(file: string, lines = 20): Promise<string> {
  try {
    return tail(await readFile(file, "utf8"), lines);
  } catch {
    return "(no log)";
  }
}

/** Runs a command, without a shell, with stdin closed and its output appended to a log file (never through a link there); resolves to the exit code. */
export async function runToLog(command: string, args: string[], opts: { logFile: string; cwd: string; env: NodeJS.ProcessEnv }): Promise<number> {
  const out = await open(opts.logFile, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
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

/** Runs a template author's pre/post install script; a failure stops the start with the log's tail. */
export async function runUserScript(
  name: "pre_install" | "post_install",
  script: string,
  opts: { scriptsDir: string; logsDir: string; cwd: string; env: NodeJS.ProcessEnv; shell: string },
): Promise<void> {
  if (script.trim() === "") return;
  const file = path.join(opts.scriptsDir, `${name}.sh`);
  const logFile = path.join(opts.logsDir, `${name}.log`);
  await writeFileAtomic(file, script, { mode: 0o700 });
  await writeFileAtomic(logFile, "", { mode: 0o600 });
  log(`running ${name}_script (log: ${logFile})`);
  const code = await runToLog(opts.shell, [file], { logFile, cwd: opts.cwd, env: opts.env });
  if (code !== 0) {
    throw new StepError(`${name}_script exited ${code}. Last lines of ${logFile}:\n${await logTail(logFile)}\nFix the script in the template; nothing else was started.`);
  }
}

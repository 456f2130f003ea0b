import path from "node:path";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { logTail } from "../lib/command-log.js";
import { log, StepError } from "../lib/log.js";
import { runToLog } from "./script-run.js";

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
    throw new StepError(
      `${name}_script exited ${code}. Last lines of ${logFile}:\n${await logTail(logFile)}\nFix the script in the template; nothing else was started.`,
    );
  }
}

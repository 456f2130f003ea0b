// Runs the checks' programs: captured, never through a shell.
import { spawn } from "node:child_process";

export interface Ran {
  code: number | null;
  output: string;
}

export function runProgram(
  program: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      // Plain text to parse: CI sets FORCE_COLOR (npm test runs with CI=true), and
      // prettier's chalk then colours "[warn]" even into a pipe.
      env: { ...(options.env ?? process.env), FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output: Buffer.concat(chunks).toString("utf8") }));
  });
}

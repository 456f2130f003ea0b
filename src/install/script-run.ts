import { closeSync } from "node:fs";
import { openLog } from "../lib/command-log.js";

/**
 * POSIX single quotes: the text stays one word and nothing in it is expanded.
 * zx's own quote writes bash's $'...', which a POSIX sh such as dash reads as
 * a literal '$' followed by the quoted text.
 */
function shellQuote(value: string): string {
  if (value.includes("\0")) throw new Error("an argument contains a NUL byte, which no program can receive");
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * Runs a shell script (a template's pre_install_script or post_install_script,
 * Goose's installer) with zx, its output appended to a log file; resolves to
 * the exit code. The command is written `exec <shell> <file>` so that the
 * shell replaces zx's: /bin/sh, which reads no startup file when not
 * interactive (bash, zx's default, would read ~/.bashrc with the socket stdin
 * Node gives a child), every word quoted by shellQuote, no `set -euo pipefail`
 * prefix (not POSIX), stdin closed, and a non-zero exit resolved, not thrown.
 * Every setting zx would otherwise take from ZX_* variables of the
 * environment (resolveDefaults in zx's core) is given here.
 */
export async function runToLog(
  command: string,
  args: string[],
  opts: { logFile: string; cwd: string; env: NodeJS.ProcessEnv },
): Promise<number> {
  // Loaded here, not at the top: a warm start runs no script, and evaluating
  // zx's modules is most of what the install's bundle costs to load.
  const { $ } = await import("zx/core");
  const out = openLog(opts.logFile);
  try {
    const shell = $({
      shell: "/bin/sh",
      prefix: "",
      postfix: "",
      quote: shellQuote,
      stdio: ["ignore", out, out],
      detached: false,
      nothrow: true,
      quiet: true,
      verbose: false,
      preferLocal: false,
      timeout: 0,
      cwd: opts.cwd,
      env: opts.env,
    });
    const output = await shell`exec ${command} ${args}`;
    return output.exitCode ?? (output.signal ? 128 : 1);
  } finally {
    closeSync(out);
  }
}

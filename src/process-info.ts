import { readFile } from "node:fs/promises";
import path from "node:path";

/** True when a command line is an `agentapi server` (optionally on a given port). */
export function isAgentapiServer(argv: string[], port?: number): boolean {
  if (argv.length < 2 || !path.basename(argv[0] ?? "").startsWith("agentapi")) return false;
  const separator = argv.indexOf("--");
  const own = separator === -1 ? argv.slice(1) : argv.slice(1, separator);
  if (!own.includes("server")) return false;
  if (port === undefined) return true;
  const flag = own.findIndex((a) => a === "--port" || a === "-p");
  const inline = own.find((a) => a.startsWith("--port="));
  const value = flag !== -1 ? own[flag + 1] : inline?.slice("--port=".length);
  return value === undefined ? port === 3284 : Number(value) === port;
}

export function parsePid(text: string): number | null {
  const trimmed = text.trim();
  if (!/^[0-9]+$/.test(trimmed)) return null;
  const pid = Number(trimmed);
  return pid > 1 ? pid : null;
}

export async function readPidFile(file: string): Promise<number | null> {
  try {
    return parsePid(await readFile(file, "utf8"));
  } catch {
    return null;
  }
}

/** The parent of a process, from /proc/<pid>/stat; null when it is gone. */
export async function parentPid(pid: number | string): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  // Field 4 (ppid) follows the parenthesised command name, which may contain spaces.
  const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : null;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The argv of a live process, or null when it is gone (or a zombie, which has an empty cmdline). */
export async function readCmdline(pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, "utf8");
    const argv = raw.split("\0").filter((part, i, all) => !(i === all.length - 1 && part === ""));
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}

/** The PID from the file, if it names a live `agentapi server` on this port; never a recycled PID. */
export async function findRunningAgentapi(pidFile: string, port: number): Promise<{ pid: number | null; status: "running" | "no-file" | "dead" | "foreign" }> {
  const pid = await readPidFile(pidFile);
  if (pid === null) return { pid: null, status: "no-file" };
  const argv = await readCmdline(pid);
  if (argv === null) return { pid, status: "dead" };
  return isAgentapiServer(argv, port) ? { pid, status: "running" } : { pid, status: "foreign" };
}

// A workspace's processes, found by the HOME they were started with: the
// scripts, AgentAPI and Goose all inherit it. Read here from /proc (proc(5)),
// never with the module's own helpers (src/lib/processes.ts), so that what a
// test sees running, and what it ends, does not come from the code under test.
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";

/** State letter and parent from /proc/<pid>/stat: the fields after the name, which may hold ")" itself. */
function parseStat(text: string): { state: string; ppid: number } | null {
  const [state, ppid] = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return text.includes(")") && state && /^[0-9]+$/.test(ppid ?? "") ? { state, ppid: Number(ppid) } : null;
}

const statOf = async (pid: number) => parseStat(await readFile(`/proc/${pid}/stat`, "utf8").catch(() => ""));

async function listPids(): Promise<number[]> {
  return (await readdir("/proc").catch(() => [] as string[])).filter((name) => /^[0-9]+$/.test(name)).map(Number);
}

/** Whether the process exists and is not a zombie. */
export async function isRunning(pid: number): Promise<boolean> {
  const state = (await statOf(pid))?.state;
  return state !== undefined && state !== "Z";
}

/** The direct children of a process. */
export async function childPids(parent: number): Promise<number[]> {
  const children: number[] = [];
  for (const pid of await listPids()) if ((await statOf(pid))?.ppid === parent) children.push(pid);
  return children;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/**
 * A process's argv from /proc/<pid>/cmdline (NUL-separated, one trailing NUL;
 * proc(5)), read here rather than with the module's own reader, so a test's
 * view of what runs does not come from the code under test. [] once it is gone.
 */
export async function commandLine(pid: number): Promise<string[]> {
  const raw = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
  return raw === "" ? [] : raw.replace(/\0$/, "").split("\0");
}

/** commandLine, or null once the process is gone. */
export async function readCmdline(pid: number): Promise<string[] | null> {
  const argv = await commandLine(pid);
  return argv.length > 0 ? argv : null;
}

/** A process's state letter (R, S, D, T, Z, ...); null once it is gone. */
export async function processState(pid: number): Promise<string | null> {
  return (await statOf(pid))?.state ?? null;
}

/** A process's parent PID; null once it is gone. */
export async function parentPid(pid: number): Promise<number | null> {
  return (await statOf(pid))?.ppid ?? null;
}

/** The umask a process runs with, e.g. "0022". */
export async function umaskOf(pid: number): Promise<string | null> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return /^Umask:\s+([0-7]+)$/m.exec(status)?.[1] ?? null;
}

/** Every running process (this one aside) whose environment holds `entry`, e.g. `HOME=/x`. */
export async function processesWithEnv(entry: string): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of await listPids()) {
    if (pid === process.pid) continue;
    const environ = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
    if (environ.split("\0").includes(entry) && (await isRunning(pid))) pids.push(pid);
  }
  return pids;
}

/** SIGKILLs every process whose environment holds `entry` until none is left or the bound passes; returns the survivors. */
export async function killProcessesWithEnv(entry: string, timeoutMs = 5000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = await processesWithEnv(entry);
    if (pids.length === 0 || Date.now() > deadline) return pids;
    for (const pid of pids) signal(pid, "SIGKILL");
    await delay(50);
  }
}

import { readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { writeFileAtomic } from "./atomic-write.js";
import { readTextOrNull } from "./files.js";
import { pollUntil } from "./poll.js";

export function parsePid(text: string): number | null {
  const trimmed = text.trim();
  if (!/^[0-9]+$/.test(trimmed)) return null;
  const pid = Number(trimmed);
  return pid > 1 ? pid : null;
}

export async function readPidFile(file: string): Promise<number | null> {
  try {
    return parsePid(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

export async function writePidFile(file: string, pid: number): Promise<void> {
  await writeFileAtomic(file, `${pid}\n`, { mode: 0o600 });
}

/** Removes the PID file only while it still names `pid`: a start that ran meanwhile may have written its own. */
export async function removePidFile(file: string, pid: number): Promise<void> {
  if ((await readPidFile(file)) === pid) rmSync(file, { force: true });
}

interface Stat {
  state: string;
  ppid: number;
  session: number;
}

/**
 * The state letter (field 3), parent (field 4) and session (field 6) from
 * /proc/<pid>/stat text. Field 2, the command name, is in parentheses and may
 * itself hold spaces and ")", so the fields after it are counted from the
 * last ")" (https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html).
 */
export function parseStat(text: string): Stat | null {
  const close = text.lastIndexOf(")");
  if (close === -1) return null;
  const [state, ppid, , session] = text.slice(close + 2).split(" ");
  if (!state || !/^[0-9]+$/.test(ppid ?? "") || !/^[0-9]+$/.test(session ?? "")) return null;
  return { state, ppid: Number(ppid), session: Number(session) };
}

async function readStat(pid: number): Promise<Stat | null> {
  return parseStat(readTextOrNull(`/proc/${pid}/stat`) ?? "");
}

/** The session a process runs in (its leader's PID); null when it is gone. */
export async function sessionOf(pid: number): Promise<number | null> {
  const session = (await readStat(pid))?.session;
  return session ? session : null;
}

/** The parent of a process; null when it is gone or has none. */
export async function parentPid(pid: number): Promise<number | null> {
  const ppid = (await readStat(pid))?.ppid;
  return ppid ? ppid : null;
}

/** Whether the process exists (EPERM: it does, as another user's) and is not a zombie waiting to be reaped. */
export async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return (await readStat(pid))?.state !== "Z";
}

/** The argv of a live process, or null when it is gone (or a zombie, which has an empty cmdline). */
export async function readCmdline(pid: number): Promise<string[] | null> {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    const argv = raw.split("\0").filter((part, i, all) => !(i === all.length - 1 && part === ""));
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}

export async function listPids(): Promise<number[]> {
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    // No /proc: no process can be looked up.
  }
  return entries.filter((entry) => /^[0-9]+$/.test(entry)).map(Number);
}

/**
 * Live processes, this one aside, whose environment holds `entry`
 * ("NAME=value"). /proc/<pid>/environ is what a process was started with, so
 * only a process that replaced its whole environment lacks an entry its
 * parent gave it; another user's cannot be read and is never named.
 */
export async function startedWith(entry: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await listPids()) {
    if (pid !== process.pid && environHas(pid, entry) && (await isRunning(pid))) found.push(pid);
  }
  return found;
}

/** Whether a process was started with `entry` ("NAME=value") in its environment. */
export function environHas(pid: number, entry: string): boolean {
  return (readTextOrNull(`/proc/${pid}/environ`) ?? "").split("\0").includes(entry);
}

/** Direct children of a process (the agent runs in its own session under AgentAPI). */
export async function childPids(parent: number): Promise<number[]> {
  const children: number[] = [];
  for (const pid of await listPids()) {
    if ((await parentPid(pid)) === parent) children.push(pid);
  }
  return children;
}

export async function descendsFrom(pid: number, ancestor: number): Promise<boolean> {
  for (
    let current: number | null = pid, hops = 0;
    current !== null && hops < 64;
    current = await parentPid(current), hops++
  ) {
    if (current === ancestor) return true;
  }
  return false;
}

/** Whether one of the process's file descriptors is one of these sockets (only this user's processes can be read). */
export async function holdsSocket(pid: number, inodes: Set<string>): Promise<boolean> {
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone, or not this user's
  }
  for (const fd of fds) {
    let target = "";
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const match = /^socket:\[([0-9]+)\]$/.exec(target);
    if (match && inodes.has(match[1] as string)) return true;
  }
  return false;
}

export function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

// Goose leaves on /exit within milliseconds (about 0.1 s for a real Goose)
// and AgentAPI right after it. Reading /proc costs microseconds, so the first
// moments are checked every millisecond or two; a longer wait (a SIGTERM
// grace period) is checked every 10 ms.
const QUICK_EXIT_MS = 250;

export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const gone = async () => ((await isRunning(pid)) ? undefined : true);
  const quick = await pollUntil(gone, { timeoutMs: Math.min(timeoutMs, QUICK_EXIT_MS), intervalMs: 1 });
  if ("value" in quick) return true;
  if (timeoutMs <= QUICK_EXIT_MS) return false;
  return "value" in (await pollUntil(gone, { timeoutMs: timeoutMs - QUICK_EXIT_MS, intervalMs: 10 }));
}

/** SIGKILL a process and the process groups of its children, so no agent is orphaned. */
export async function killTree(pid: number): Promise<number[]> {
  const children = await childPids(pid);
  for (const child of children) {
    if (!signal(-child, "SIGKILL")) signal(child, "SIGKILL");
  }
  signal(pid, "SIGKILL");
  return children;
}

import { readdir, readFile } from "node:fs/promises";
import { isAlive, parentPid } from "./process-info.js";
import { pollUntil } from "./http.js";

/** Direct children of a process, from /proc (the agent runs in its own session under AgentAPI). */
export async function childPids(parent: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (/^[0-9]+$/.test(entry) && (await parentPid(entry)) === parent) children.push(Number(entry));
  }
  return children;
}

export function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

// Goose leaves on /exit in about 0.1 s and AgentAPI right after it; reading
// /proc every 10 ms costs little and keeps the stop close to that.
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const result = await pollUntil(async () => (isAlive(pid) && !(await isZombie(pid)) ? undefined : true), { timeoutMs, intervalMs: 10 });
  return "value" in result;
}

async function isZombie(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
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

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach } from "vitest";

/** Returns a starter for long-lived test processes; the calling file's afterEach kills what it started. */
export function liveChildren(): (file: string, args: string[], argv0?: string) => Promise<number> {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });
  return async (file, args, argv0) => {
    const child = spawn(file, args, { stdio: "ignore", argv0 });
    children.push(child);
    await once(child, "spawn");
    return child.pid as number;
  };
}

/** The PID of a process that has already exited. */
export async function exitedPid(): Promise<number> {
  const child = spawn("/bin/true", [], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid as number;
}

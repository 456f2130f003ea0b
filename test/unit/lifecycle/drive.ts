// Runs lifecycle-driver.ts, bundled once per test file, as real processes.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { build } from "esbuild";
import { afterEach, beforeAll } from "vitest";

export interface Driven {
  child: ChildProcess;
  /** The first line it printed, parsed. */
  outcome: Promise<Record<string, unknown>>;
}

/** Registers the bundling and the cleanup; returns how to start a driver: `drive(command, moduleDir, go, ...extra)`. */
export function driverProcesses(scratch: () => Promise<string>) {
  let driver = "";
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    driver = path.join(await scratch(), "driver.mjs");
    const entryPoints = [path.join(import.meta.dirname, "lifecycle-driver.ts")];
    await build({
      entryPoints,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node18",
      outfile: driver,
      logLevel: "silent",
    });
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  });
  return (command: string, moduleDir: string, go: string, ...extra: string[]): Driven => {
    const child = spawn(process.execPath, [driver, command, moduleDir, go, ...extra], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(child);
    const outcome = new Promise<Record<string, unknown>>((resolve, reject) => {
      let text = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        const line = text.split("\n")[0];
        if (text.includes("\n") && line) resolve(JSON.parse(line));
      });
      child.once("exit", (code) => reject(new Error(`driver exited (${code}) before it said anything`)));
    });
    return { child, outcome };
  };
}

import path from "node:path";
import { readCmdline, readPidFile } from "../lib/processes.js";

/**
 * The port `agentapi server` listens on without --port (cmd/server/server.go,
 * coder/agentapi @ v0.12.2), and so the one every AgentAPI-based module
 * defaults to.
 */
export const AGENTAPI_DEFAULT_PORT = 3284;

export function agentapiUrl(port: number, route: string): string {
  return `http://127.0.0.1:${port}${route}`;
}

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
  return value === undefined ? port === AGENTAPI_DEFAULT_PORT : Number(value) === port;
}

export type FoundAgentapi = { status: "no-file"; pid: null } | { status: "running" | "dead" | "foreign"; pid: number };

/** The PID from the file, if it names a live `agentapi server` on this port; never a recycled PID. */
export async function findRunningAgentapi(pidFile: string, port: number): Promise<FoundAgentapi> {
  const pid = await readPidFile(pidFile);
  if (pid === null) return { pid: null, status: "no-file" };
  const argv = await readCmdline(pid);
  if (argv === null) return { pid, status: "dead" };
  return isAgentapiServer(argv, port) ? { pid, status: "running" } : { pid, status: "foreign" };
}

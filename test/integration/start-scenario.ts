// Readings of Goose and AgentAPI that the start script's tests share
// (start.test.ts, start-install.test.ts): what Goose received and reports,
// the command AgentAPI runs, and the module's PID file.

import { readFile, stat } from "node:fs/promises";
import { expect } from "vitest";
import { gooseMessages, type Workspace } from "../../support/workspace/index.js";
import { cmdline, PROMPT } from "./scenario.js";

export type Event = Record<string, any>;

/** Goose processes AgentAPI launched, from the double's event log (not `--version`, `session list` or `session export` probes). */
export function agentLaunches(events: Event[]): Event[] {
  return events.filter(
    (e) =>
      e.event === "start" &&
      (e.argv[1] === "run" || e.argv[1] === "session") &&
      e.argv[2] !== "list" &&
      e.argv[2] !== "export",
  );
}

/**
 * The session of each time Goose received `text` as a user message, oldest
 * first: its user-visible rows in Goose's own database, so this holds for
 * the double and a real Goose alike.
 */
export async function deliveredIn(ws: Workspace, text = PROMPT): Promise<string[]> {
  return (await gooseMessages(ws.gooseDb, "user"))
    .filter((m) => m.userVisible && m.text === text)
    .map((m) => m.sessionId);
}

/**
 * The Goose command line AgentAPI runs: what follows `--` in its own, past the
 * env(1) that gives Goose the user's TMPDIR back (`env -- TMPDIR=...` or `env -u TMPDIR --`).
 */
export async function agentCommand(pid: number): Promise<string[]> {
  const argv = await cmdline(pid);
  const command = argv.slice(argv.indexOf("--") + 1);
  expect(command[0]).toBe("env");
  // env's options end at its "--"; the user's TMPDIR may follow as a setting.
  const after = command.indexOf("--") + 1;
  return command.slice(command[after]?.startsWith("TMPDIR=") ? after + 1 : after);
}

export interface ListedSession {
  id: string;
  name: string;
  working_dir: string;
  message_count: number;
}

/** What Goose itself reports (`goose session list --format json`), run with the workspace's environment. */
export async function gooseSessions(ws: Workspace): Promise<ListedSession[]> {
  return JSON.parse(await ws.gooseSessionList());
}

export async function readPid(file: string): Promise<number> {
  const text = await readFile(file, "utf8");
  expect(text).toMatch(/^[0-9]+\n?$/);
  return Number(text.trim());
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

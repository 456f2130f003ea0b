import { access } from "node:fs/promises";
import path from "node:path";
import { $ } from "zx/core";
import type { SessionProbe } from "./session-decision.js";
import { commandPath } from "./shell.js";

interface ListedSession {
  id?: unknown;
  name?: unknown;
  description?: unknown;
  session_type?: unknown;
  message_count?: unknown;
  working_dir?: unknown;
  updated_at?: unknown;
  last_message_at?: unknown;
}

const RESUMABLE_TYPES = new Set(["user", "scheduled"]);

function activity(session: ListedSession): string {
  return String(session.last_message_at ?? session.updated_at ?? "");
}

/**
 * Finds the session `goose session --resume --name X` would pick in the output
 * of `goose session list --format json`: an exact match on name or id among
 * user and scheduled sessions, the most recently active first. Goose 1.10-1.11
 * used `description` where later versions use `name`.
 */
export function findNamedSession(listJson: string, name: string, source = "goose session list"): SessionProbe {
  const parsed: unknown = JSON.parse(listJson.trim() === "" ? "[]" : listJson);
  if (!Array.isArray(parsed)) throw new Error("goose session list --format json did not print a JSON array");
  const matches = (parsed as ListedSession[])
    .filter((s) => s && typeof s === "object")
    .filter((s) => s.session_type === undefined || RESUMABLE_TYPES.has(String(s.session_type)))
    .filter((s) => s.id === name || s.name === name || (s.name === undefined && s.description === name))
    .sort((a, b) => activity(b).localeCompare(activity(a)));
  const best = matches[0];
  if (!best) return { kind: "absent", source };
  return {
    kind: "found",
    id: String(best.id),
    messages: Number(best.message_count ?? 0) || 0,
    workingDir: typeof best.working_dir === "string" ? best.working_dir : null,
    source,
  };
}

/** Where Goose keeps sessions.db (goose.md §2.1): GOOSE_PATH_ROOT when absolute, else XDG. */
export function gooseSessionsDb(env: NodeJS.ProcessEnv, home: string): string {
  const root = env.GOOSE_PATH_ROOT;
  if (root && path.isAbsolute(root)) return path.join(root, "data", "sessions", "sessions.db");
  const dataHome = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, ".local", "share");
  return path.join(dataHome, "goose", "sessions", "sessions.db");
}

/** The read-only query behind the sqlite3 fallback; the name travels as hex, never as SQL text. */
export function sessionQuery(name: string): string {
  const hex = Buffer.from(name, "utf8").toString("hex");
  const match = `CAST(X'${hex}' AS TEXT)`;
  return (
    "SELECT s.id AS id, s.working_dir AS working_dir, " +
    "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role = 'user') AS user_messages " +
    `FROM sessions s WHERE (s.name = ${match} OR s.id = ${match}) ` +
    "AND s.session_type IN ('user', 'scheduled') ORDER BY s.updated_at DESC LIMIT 1;"
  );
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Asks Goose itself first (sqlite3 is missing from many images); falls back to
 * a read-only look at the database, and reports "unknown" rather than guess.
 */
export async function probeSession(opts: { goose: string; name: string; env: NodeJS.ProcessEnv; home: string; cwd: string }): Promise<SessionProbe> {
  const cli = await $({ env: opts.env, cwd: opts.cwd, nothrow: true, quiet: true, timeout: "60s" })`${opts.goose} session list --format json`;
  let cliProblem: string;
  if (cli.exitCode === 0) {
    try {
      return findNamedSession(cli.stdout, opts.name);
    } catch (error) {
      cliProblem = `goose session list printed something that is not a session list (${(error as Error).message})`;
    }
  } else {
    cliProblem = `goose session list --format json exited ${cli.exitCode}: ${cli.stderr.trim().split("\n").slice(-1)[0] ?? ""}`;
  }

  const db = gooseSessionsDb(opts.env, opts.home);
  if (!(await exists(db))) return { kind: "absent", source: `no Goose database at ${db}` };
  if (!(await commandPath("sqlite3", opts.env.PATH))) return { kind: "unknown", reason: `${cliProblem}; sqlite3 is not installed for a read-only check` };
  const query = await $({ nothrow: true, quiet: true, timeout: "30s" })`sqlite3 -readonly -json ${`file:${db}?mode=ro`} ${sessionQuery(opts.name)}`;
  if (query.exitCode !== 0) return { kind: "unknown", reason: `${cliProblem}; sqlite3 failed: ${query.stderr.trim()}` };
  const rows = JSON.parse(query.stdout.trim() || "[]") as Array<{ id: string; working_dir: string; user_messages: number }>;
  const row = rows[0];
  if (!row) return { kind: "absent", source: `sqlite3 read of ${db} (after: ${cliProblem})` };
  return { kind: "found", id: row.id, messages: row.user_messages, workingDir: row.working_dir, source: `sqlite3 read of ${db}` };
}

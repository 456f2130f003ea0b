import path from "node:path";
import { commandPath, type RunResult, run } from "../lib/exec.js";
import { exists } from "../lib/files.js";
import {
  type ListedSession,
  parseSessionExport,
  parseSessionList,
  pickNamedSession,
  type SessionExport,
  type SessionProbe,
  type SessionRow,
  sessionQuery,
  sqliteReadOnlyUri,
  type TailRead,
  tailFromRow,
} from "./session-records.js";

/** Where Goose keeps sessions.db: under GOOSE_PATH_ROOT when absolute, else XDG (crates/goose/src/config/paths.rs in aaif-goose/goose). */
export function gooseSessionsDb(env: NodeJS.ProcessEnv, home: string): string {
  const root = env.GOOSE_PATH_ROOT;
  if (root && path.isAbsolute(root)) return path.join(root, "data", "sessions", "sessions.db");
  const dataHome =
    env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, ".local", "share");
  return path.join(dataHome, "goose", "sessions", "sessions.db");
}

/** One line saying why a helper gave no usable answer. */
export function describeFailure(label: string, result: RunResult, timeoutMs: number): string {
  if (result.error !== undefined) return `${label} could not be started (${result.error})`;
  if (result.timedOut) return `${label} did not finish within ${timeoutMs / 1000} s`;
  if (result.truncated) return `${label} printed more than the module reads`;
  if (result.code === null) return `${label} was killed by ${result.signal ?? "a signal"}`;
  const lastLine = result.stderr.trim().split("\n").slice(-1)[0] ?? "";
  return `${label} exited ${result.code}${lastLine === "" ? "" : `: ${lastLine}`}`;
}

const LIST_TIMEOUT_MS = 60_000;
const EXPORT_TIMEOUT_MS = 60_000;
const SQLITE_TIMEOUT_MS = 30_000;
// A long session's export holds every message; beyond this it is not read.
const EXPORT_MAX_BYTES = 64 * 1024 * 1024;
const LIST_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The conversation's end from `goose session export`: of the session with id
 * `id` when given, else of the one `--name` resolves to, as resume does.
 */
async function tailFromExport(opts: {
  goose: string;
  name: string;
  id?: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): Promise<SessionExport | { problem: string }> {
  const label = "goose session export --format json";
  const which = opts.id === undefined ? ["--name", opts.name] : ["--session-id", opts.id];
  const result = await run(opts.goose, ["session", "export", ...which, "--format", "json"], {
    env: opts.env,
    cwd: opts.cwd,
    timeoutMs: EXPORT_TIMEOUT_MS,
    maxBytes: EXPORT_MAX_BYTES,
  });
  if (result.code !== 0 || result.truncated) return { problem: describeFailure(label, result, EXPORT_TIMEOUT_MS) };
  try {
    return parseSessionExport(result.stdout);
  } catch (error) {
    return { problem: `${label} printed something that is not a session export (${(error as Error).message})` };
  }
}

/** Runs sessionQuery against the database read-only; the row is null when no session matches. */
export async function querySessionDb(
  sqlite: string,
  db: string,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<{ row: SessionRow | null } | { problem: string }> {
  // -init /dev/null: the shell would otherwise run the user's ~/.sqliterc first.
  const query = await run(
    sqlite,
    ["-init", "/dev/null", "-batch", "-bail", "-readonly", "-json", sqliteReadOnlyUri(db), sessionQuery(name)],
    { env, timeoutMs: SQLITE_TIMEOUT_MS },
  );
  if (query.code !== 0 || query.truncated) return { problem: describeFailure("sqlite3", query, SQLITE_TIMEOUT_MS) };
  try {
    const rows = JSON.parse(query.stdout.trim() || "[]") as SessionRow[];
    return { row: rows[0] ?? null };
  } catch (error) {
    return { problem: `sqlite3 printed something that is not JSON (${(error as Error).message})` };
  }
}

/** The session row from a read-only look at Goose's database, or why there is none. */
async function rowFromDb(opts: {
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
}): Promise<{ db: string; row: SessionRow | null; noDb?: true } | { problem: string }> {
  const db = gooseSessionsDb(opts.env, opts.home);
  if (!(await exists(db))) return { db, row: null, noDb: true };
  const sqlite = await commandPath("sqlite3", opts.env.PATH);
  if (!sqlite) return { problem: "sqlite3 is not installed for a read-only check" };
  // sessionQuery matches an exact id as Goose's resume does, so `name` may be an id.
  const found = await querySessionDb(sqlite, db, opts.name, opts.env);
  return "problem" in found ? found : { db, row: found.row };
}

/**
 * Asks Goose itself first (sqlite3 is missing from many images); falls back to
 * a read-only look at the database, and reports "unknown" rather than guess.
 * The message count is Goose's message_count: user-visible messages only.
 * `sessions` is Goose's whole list when Goose gave it, else null.
 */
async function probeWithList(opts: {
  goose: string;
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
}): Promise<{ probe: SessionProbe; sessions: ListedSession[] | null }> {
  const label = "goose session list --format json";
  const cli = await run(opts.goose, ["session", "list", "--format", "json"], {
    env: opts.env,
    cwd: opts.cwd,
    timeoutMs: LIST_TIMEOUT_MS,
    maxBytes: LIST_MAX_BYTES,
  });
  let cliProblem = describeFailure(label, cli, LIST_TIMEOUT_MS);
  if (cli.code === 0 && !cli.truncated) {
    try {
      const sessions = parseSessionList(cli.stdout);
      return { probe: pickNamedSession(sessions, opts.name), sessions };
    } catch (error) {
      cliProblem = `goose session list printed something that is not a session list (${(error as Error).message})`;
    }
  }
  const fromDb = await rowFromDb(opts);
  const none = (probe: SessionProbe) => ({ probe, sessions: null });
  if ("problem" in fromDb) return none({ kind: "unknown", reason: `${cliProblem}; ${fromDb.problem}` });
  if (fromDb.noDb) return none({ kind: "absent", source: `no Goose database at ${fromDb.db}` });
  if (fromDb.row === null)
    return none({ kind: "absent", source: `sqlite3 read of ${fromDb.db} (after: ${cliProblem})` });
  const tail = tailFromRow(fromDb.row);
  return none({
    kind: "found",
    id: fromDb.row.id,
    messages: tail.visibleCount,
    workingDir: fromDb.row.working_dir,
    source: `sqlite3 read of ${fromDb.db}`,
  });
}

/** probeWithList's probe alone. */
export async function probeSession(opts: {
  goose: string;
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
}): Promise<SessionProbe> {
  return (await probeWithList(opts)).probe;
}

/**
 * How the conversation of session `name` ends: from `goose session export`
 * (session list carries no roles), else from the database with sqlite3. With
 * `expectedId` (the probe's id), an answer about another session is unknown.
 */
export async function readConversationTail(opts: {
  goose: string;
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
  expectedId?: string;
  /** Why an export already run gave no answer: it is not run again. */
  exportProblem?: string;
}): Promise<TailRead> {
  const wrongSession = (id: string | null) => opts.expectedId !== undefined && id !== opts.expectedId;
  const exported =
    opts.exportProblem === undefined
      ? await tailFromExport({ ...opts, id: opts.expectedId })
      : { problem: opts.exportProblem };
  let exportProblem: string;
  if ("problem" in exported) exportProblem = exported.problem;
  else if (wrongSession(exported.id))
    exportProblem = `goose session export returned session ${exported.id ?? "(no id)"}, not ${opts.expectedId}`;
  else return { kind: "read", tail: exported.tail, source: "goose session export" };

  const which = opts.expectedId ?? opts.name;
  const fromDb = await rowFromDb({ ...opts, name: which });
  if ("problem" in fromDb) return { kind: "unknown", reason: `${exportProblem}; ${fromDb.problem}` };
  if (fromDb.row === null)
    return {
      kind: "unknown",
      reason: `${exportProblem}; ${fromDb.noDb ? `no Goose database at ${fromDb.db}` : `no session "${which}" in ${fromDb.db}`}`,
    };
  if (wrongSession(fromDb.row.id))
    return {
      kind: "unknown",
      reason: `${exportProblem}; the database's session "${opts.name}" is ${fromDb.row.id}, not ${opts.expectedId}`,
    };
  return { kind: "read", tail: tailFromRow(fromDb.row), source: `sqlite3 read of ${fromDb.db}` };
}

/**
 * Goose's answer for session `name`: the probe, how its conversation ends
 * when Goose has it, and Goose's whole session list when it was read (null
 * otherwise). One Goose process in the common warm case: when Goose has a
 * database, `goose session export --name` runs first; it resolves the name
 * exactly as `goose session --resume --name` does (lookup_session_id and
 * get_or_create_session_id in crates/goose-cli/src/cli.rs at v1.46.1,
 * aaif-goose/goose), so when its session holds messages, no other session of
 * that name can hold a newer conversation, and its conversation gives both the
 * message count and the tail. An empty session may be a namesake created after
 * a conversation (an earlier version of the module made one at each restart
 * nobody typed in), so then the list decides (pickNamedSession), as it does
 * with no database or when the export gives no answer; the tail then comes
 * from an export by id, else from the database.
 *
 * `firstLaunch`: the module has never launched Goose in this module folder
 * (no launch record). With no database either, Goose has never stored a
 * session where it keeps them, so none has the module's name, and no Goose
 * process is run: on a workspace's first start the list costs a Goose
 * process, the longest step before the launch. Once the module has launched
 * Goose, a missing database is asked about as before: Goose's list, not the
 * path the module expects, then decides.
 */
export async function readSession(opts: {
  goose: string;
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
  firstLaunch?: boolean;
}): Promise<{ probe: SessionProbe; tail: TailRead; sessions: ListedSession[] | null }> {
  let exportProblem: string | undefined;
  let empty: SessionExport | null = null;
  const source = "goose session export";
  const db = gooseSessionsDb(opts.env, opts.home);
  const haveDb = await exists(db);
  if (!haveDb && opts.firstLaunch) {
    const why = `no Goose database at ${db}, and the module never launched Goose here`;
    return { probe: { kind: "absent", source: why }, tail: { kind: "unknown", reason: why }, sessions: null };
  }
  if (haveDb) {
    const exported = await tailFromExport(opts);
    if ("problem" in exported) exportProblem = exported.problem;
    else if (exported.id === null) exportProblem = "goose session export printed no session id";
    else if (exported.tail.visibleCount === 0) empty = exported;
    else {
      const { id, workingDir, tail } = exported;
      return {
        probe: { kind: "found", id, messages: tail.visibleCount, workingDir, source },
        tail: { kind: "read", tail, source },
        sessions: null,
      };
    }
  }
  const listed = await probeWithList(opts);
  const { sessions } = listed;
  // Without a list, the export's own empty session is still Goose's answer for the name.
  const probe: SessionProbe =
    listed.probe.kind === "unknown" && empty !== null && empty.id !== null
      ? { kind: "found", id: empty.id, messages: 0, workingDir: empty.workingDir, source }
      : listed.probe;
  if (probe.kind !== "found")
    return {
      probe,
      tail: { kind: "unknown", reason: probe.kind === "absent" ? `Goose has no session "${opts.name}"` : probe.reason },
      sessions,
    };
  if (empty !== null && empty.id === probe.id)
    return { probe, tail: { kind: "read", tail: empty.tail, source }, sessions };
  return {
    probe,
    tail: await readConversationTail({ ...opts, expectedId: probe.id, exportProblem }),
    sessions,
  };
}

import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, open, readFile, unlink } from "node:fs/promises";
import { createConnection, createServer, type Server } from "node:net";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";

// One lock per module folder serialises the lifecycle's claims: a start's or
// the supervisor's launch of AgentAPI (the stop count checked, AgentAPI
// spawned), the supervisor's claim of supervisor.pid, and a whole stop with its
// stand-down. It is a listening Unix socket in Linux's abstract namespace
// (unix(7)): binding a name there either succeeds for exactly one process or
// fails with EADDRINUSE, and the kernel frees the name when the process exits
// in any way, SIGKILL included, so a dead holder never blocks anyone and there
// is no stale lock to break. A lock file (O_EXCL) survives its holder's crash,
// and breaking it safely needs a second lock; flock(1) is not in every image
// (busybox, distroless) and Node.js has no flock(2). The name is derived from a
// random id kept in the private module folder, so another user of the machine
// cannot take it first. Node.js 18 and 20 pad an abstract name with NULs to
// the full address length, Node.js 22 and Bun do not, so a start and a stop
// meet at the same name only under the same runtime; the wrapper picks the
// same one for every script of a workspace.

const ID_FILE = "lifecycle-lock-id";

export interface LifecycleLock {
  release(): Promise<void>;
}

export type LockOutcome = { lock: LifecycleLock } | { busy: string } | { aborted: string } | { noFolder: true };

/** The folder's lock id: read, or created once (written under a temporary name, then linked, so it is never seen half-written). */
async function lockId(moduleDir: string): Promise<string> {
  const file = path.join(moduleDir, ID_FILE);
  const existing = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  if (existing !== null && /^[0-9a-f]{32}$/.test(existing.trim())) return existing.trim();
  const temp = path.join(moduleDir, `.${ID_FILE}.${process.pid}.${randomBytes(6).toString("hex")}`);
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.writeFile(`${randomBytes(16).toString("hex")}\n`);
  } finally {
    await handle.close();
  }
  try {
    if (existing !== null) await unlink(file).catch(() => undefined);
    await link(temp, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return (await readFile(file, "utf8")).trim();
}

/** Binds the abstract name; resolves null when another process holds it. */
function bind(name: string, role: string): Promise<Server | null> {
  return new Promise((resolve, reject) => {
    // Each connection is answered with who holds the lock, for a waiter's log and its patience.
    const server = createServer((socket) => socket.end(`${role} ${process.pid}\n`));
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" ? resolve(null) : reject(error),
    );
    server.listen({ path: name, exclusive: true }, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** Who holds the lock ("stop 1234"), or "unknown" when it does not say within a moment. */
function holderOf(name: string): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const socket = createConnection({ path: name });
    const done = (what: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done("unknown"), 200);
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8");
    });
    socket.on("end", () => done(text.trim() || "unknown"));
    socket.on("error", () => done("unknown"));
  });
}

/**
 * Takes the module folder's lifecycle lock as `role`, waiting while someone
 * else holds it: at most `patienceMs(holder)` ms, where holder is what the
 * holder says it is ("stop 1234"), and never past an `abort` reason.
 */
export async function acquireLifecycleLock(
  moduleDir: string,
  role: string,
  opts: { patienceMs: (holder: string) => number; abort?: () => string | undefined },
): Promise<LockOutcome> {
  let id: string;
  try {
    id = await lockId(moduleDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { noFolder: true };
    throw error;
  }
  const name = `\0coder-goose-module-${id}`;
  const started = Date.now();
  let holder = "unknown";
  let asked = 0;
  for (;;) {
    const server = await bind(name, role);
    if (server !== null)
      return {
        lock: {
          release: () => new Promise<void>((resolve) => server.close(() => resolve())),
        },
      };
    // Asked now and then: the holder may change while this waits.
    if (Date.now() - asked >= 250) {
      holder = await holderOf(name);
      asked = Date.now();
    }
    const aborted = opts.abort?.();
    if (aborted) return { aborted };
    if (Date.now() - started >= opts.patienceMs(holder)) return { busy: holder };
    await delay(20);
  }
}

/**
 * How long a start or the supervisor waits for the lock. A stop holds it for
 * the whole stop, which its bounds let take up to about ten minutes (300 s
 * each for the turn and SIGTERM waits); anyone else holds it for
 * milliseconds, so a longer wait means that holder is stuck.
 */
export function lockPatience(holder: string): number {
  return holder.startsWith("stop ") ? 15 * 60_000 : 10_000;
}

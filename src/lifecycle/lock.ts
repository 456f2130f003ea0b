import { closeSync, constants, mkdirSync, openSync, readdirSync, renameSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { randomSuffix } from "../lib/files.js";
import { ensurePrivateDir } from "../lib/private-dirs.js";

// One lock per module folder serialises the lifecycle's claims: a start's or
// the supervisor's launch of AgentAPI (the stop count checked, AgentAPI
// spawned), the supervisor's claim of supervisor.pid, and a whole stop with its
// stand-down. It belongs to the workspace user: it lives in the folder
// lifecycle-lock inside the module folder, mode 0700 and checked to be this
// user's (private-dirs.ts), so another uid can neither add a socket there nor
// connect to one (connecting to a path socket needs search permission on its
// folder, unix(7)). An abstract-namespace name, which every uid of the network
// namespace sees in /proc/net/unix and can bind once it is free, would let
// another user hold the lock and say anything about itself.
//
// Each contender listens on a Unix socket of its own, `t-<pid>-<random>`, and
// enters by renaming it to `c-<...>` (so every `c-` entry was listening when it
// appeared), then lists the folder and connects to every other `c-` entry. A
// refused connection is a socket whose process has closed it or died: such a
// socket can never listen again (a new bind makes a new file), so removing
// that name removes nothing alive, and a holder killed with SIGKILL blocks
// nobody. If another entry answers, the contender renames itself back to `t-`
// and tries again; if none does, it holds the lock until it removes its entry.
// Two never hold it at once: of two overlapping holders, the one that entered
// second listed the folder while the first's entry was there and listening
// (a holder keeps both until it releases), so it saw a live entry and did not
// take the lock. Two contenders can both step back; the random pause before
// the next try separates them. A lock file made with O_EXCL, or one fixed
// socket path, would survive its holder's crash, and removing it safely then
// needs a second lock; flock(1) is not in every image (busybox, distroless)
// and Node.js has no flock(2).
//
// The folder is opened once and every name is reached through
// /proc/self/fd/<fd>/, so the socket address stays short whatever $HOME is
// (sun_path holds 108 bytes, unix(7)) without changing the process's working
// directory, and every step acts on the folder that was checked.

const LOCK_DIR = "lifecycle-lock";

export interface LifecycleLock {
  release(): Promise<void>;
}

export type LockOutcome =
  | { lock: LifecycleLock }
  | { busy: string; waitedMs: number }
  | { aborted: string }
  | { noFolder: true };

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** The lock folder's descriptor, created 0700 and checked to be this user's; null when the module folder is missing. */
async function openLockDir(moduleDir: string): Promise<number | null> {
  const dir = path.join(moduleDir, LOCK_DIR);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (errno(error) === "ENOENT") return null;
    if (errno(error) !== "EEXIST") throw error;
  }
  await ensurePrivateDir(dir);
  return openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
}

/** Listens at `address`; each connection is told `says()`: who holds the lock, or nothing while this only contends. */
function listen(address: string, says: () => string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.end(says()));
    server.once("error", reject);
    server.listen({ path: address, exclusive: true }, () => {
      server.unref();
      resolve(server);
    });
  });
}

type Probe = { dead: true } | { gone: true } | { says: string };

/**
 * Connects to a contender's socket: dead when refused (a socket no process
 * listens on, which never listens again); gone when the name is missing (its
 * contender renamed it back to `t-` or released the lock since the listing);
 * otherwise alive, with what it says within a moment ("stop 1234", "" while
 * it only contends or when it is slow to answer).
 */
function probe(address: string): Promise<Probe> {
  return new Promise((resolve) => {
    let text = "";
    const socket = createConnection({ path: address });
    const done = (outcome: Probe) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done({ says: text.trim() }), 200);
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8");
    });
    socket.on("end", () => done({ says: text.trim() }));
    // Any other failure (EAGAIN: a full backlog) is a live socket's.
    socket.on("error", (error: NodeJS.ErrnoException) =>
      done(error.code === "ECONNREFUSED" ? { dead: true } : error.code === "ENOENT" ? { gone: true } : { says: "" }),
    );
  });
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errno(error) !== "ESRCH";
  }
}

/**
 * Lists the other contenders: removes the entries of dead ones, and returns
 * what the live `c-` entries say ([] when none is alive).
 */
async function others(at: (name: string) => string, mine: string): Promise<string[]> {
  const live: string[] = [];
  for (const name of readdirSync(at(""))) {
    if (name.slice(2) === mine) continue;
    if (name.startsWith("c-")) {
      const outcome = await probe(at(name));
      if ("says" in outcome) live.push(outcome.says);
      // Only a refused name is removed. A missing one may be back by now, its
      // contender's next try, listening: removing it then took a live entry
      // (seen on a loaded machine as that contender's rename failing ENOENT).
      else if ("dead" in outcome) unlinkQuietly(at(name));
    } else if (name.startsWith("t-")) {
      // A `t-` socket may not be listening yet; only its process's death makes it stale.
      const pid = Number(name.split("-")[1]);
      if (Number.isSafeInteger(pid) && pid > 0 && !processAlive(pid)) unlinkQuietly(at(name));
    }
  }
  return live;
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
  const dir = await openLockDir(moduleDir);
  if (dir === null) return { noFolder: true };
  const at = (name: string) => `/proc/self/fd/${dir}/${name}`;
  const mine = `${process.pid}-${randomSuffix()}`;
  let holding = false;
  let server: Server | undefined;
  const giveUp = async () => {
    server?.close();
    unlinkQuietly(at(`t-${mine}`));
    closeSync(dir);
  };
  try {
    server = await listen(at(`t-${mine}`), () => (holding ? `${role} ${process.pid}\n` : ""));
    const started = Date.now();
    let holder = "unknown";
    for (;;) {
      renameSync(at(`t-${mine}`), at(`c-${mine}`));
      const live = await others(at, mine);
      if (live.length === 0) {
        holding = true;
        const held = server;
        return {
          lock: {
            release: async () => {
              holding = false;
              unlinkQuietly(at(`c-${mine}`));
              await new Promise<void>((resolve) => held.close(() => resolve()));
              closeSync(dir);
            },
          },
        };
      }
      renameSync(at(`c-${mine}`), at(`t-${mine}`));
      holder = live.find((says) => says !== "") ?? holder;
      const aborted = opts.abort?.();
      const waitedMs = Date.now() - started;
      if (aborted) {
        await giveUp();
        return { aborted };
      }
      if (waitedMs >= opts.patienceMs(holder)) {
        await giveUp();
        return { busy: holder, waitedMs };
      }
      await delay(20 + Math.floor(Math.random() * 20));
    }
  } catch (error) {
    if (!holding) await giveUp().catch(() => undefined);
    throw error;
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

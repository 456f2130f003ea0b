import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { descendsFrom, holdsSocket, listPids } from "./processes.js";

export interface Listener {
  inode: string;
  uid: number;
}

/**
 * The listening sockets on a TCP port in /proc/net/tcp or tcp6 text: local
 * address `HEX_IP:HEX_PORT`, state 0A is LISTEN, then uid and inode
 * (https://www.kernel.org/doc/Documentation/networking/proc_net_tcp.txt).
 */
export function parseListeners(procNetTcp: string, port: number): Listener[] {
  const listeners: Listener[] = [];
  for (const line of procNetTcp.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const local = fields[1] ?? "";
    const portHex = local.slice(local.lastIndexOf(":") + 1);
    if (fields[3] !== "0A" || parseInt(portHex, 16) !== port) continue;
    listeners.push({ uid: Number(fields[7]), inode: fields[9] ?? "" });
  }
  return listeners;
}

export async function portListeners(port: number): Promise<Listener[]> {
  const tables = await Promise.all(
    ["/proc/net/tcp", "/proc/net/tcp6"].map((table) => readFile(table, "utf8").catch(() => "")),
  );
  return tables.flatMap((text) => parseListeners(text, port));
}

/** The processes that hold one of these sockets (only this user's can be inspected). */
async function socketHolders(inodes: Set<string>): Promise<number[]> {
  const holders: number[] = [];
  for (const pid of await listPids()) {
    if (await holdsSocket(pid, inodes)) holders.push(pid);
  }
  return holders;
}

/**
 * Whether the process this script started (or a process it started, when
 * agentapi is a wrapper script) listens on the port: proof that the server
 * answering there is ours.
 */
export async function listensOn(pid: number, port: number): Promise<boolean> {
  const inodes = new Set((await portListeners(port)).map((l) => l.inode));
  if (inodes.size === 0) return false;
  // Usually the process itself listens: one look at its own descriptors
  // rather than at every process's, while AgentAPI and Goose are starting.
  if (await holdsSocket(pid, inodes)) return true;
  for (const holder of await socketHolders(inodes)) {
    if (await descendsFrom(holder, pid)) return true;
  }
  return false;
}

/**
 * A process's name (/proc/PID/comm, at most 15 bytes; proc(5)), or null when
 * it is gone. Never its command line: that can hold a token, and the message
 * goes to the build log.
 */
async function processName(pid: number): Promise<string | null> {
  try {
    return (await readFile(`/proc/${pid}/comm`, "utf8")).replace(/\n$/, "");
  } catch {
    return null;
  }
}

/** Who holds a port, in words for an error message (PID and process name); null when nobody listens on it. */
export async function describePortHolder(port: number): Promise<string | null> {
  const listeners = await portListeners(port);
  if (listeners.length === 0) return null;
  const holders = await socketHolders(new Set(listeners.map((l) => l.inode)));
  if (holders.length === 0) {
    const uids = [...new Set(listeners.map((l) => l.uid))].join(", ");
    return `a process of user id ${uids} that this user cannot inspect`;
  }
  const described = await Promise.all(
    holders.map(async (pid) => {
      const name = await processName(pid);
      return `PID ${pid} (${name === null ? "gone" : JSON.stringify(name)})`;
    }),
  );
  return described.join(", ");
}

/**
 * Whether a server could listen on the port on every interface right now, as
 * AgentAPI will (Go's net.Listen on ":port": "::" with IPv4 mapped into it,
 * or 0.0.0.0 on a machine without IPv6): false when a bind is refused as in
 * use, null when it fails for another reason. A listen without an address is
 * the same bind from Node.js (libuv tries "::", then 0.0.0.0), and it looks
 * no address up: with one, Node.js resolves it and compiles its IPv6 pattern
 * first. In a fresh process it took 2.5 to 3.5 ms, where binding 0.0.0.0 and
 * then "::" apart took 9 to 10. Listening and closing takes little, where
 * reading /proc/net/tcp6 on a machine with many sockets takes tens (it lists
 * every connection, TIME_WAIT included), so who holds the port is looked up
 * only once it is taken.
 */
export async function portBindable(port: number): Promise<boolean | null> {
  return new Promise<boolean | null>((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EADDRINUSE" ? false : null));
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

// The install and the start each check the port as they begin, side by side:
// one's bind, held from its listen to its close, can refuse the other's.
const BIND_AGAIN_MS = 20;

/**
 * describePortHolder, with the /proc walk only when the port cannot be bound,
 * twice: a refused bind is tried again after `pause` before anyone is named.
 */
export async function portHolderIfTaken(
  port: number,
  pause: () => Promise<unknown> = () => delay(BIND_AGAIN_MS),
): Promise<string | null> {
  if ((await portBindable(port)) === true) return null;
  await pause();
  if ((await portBindable(port)) === true) return null;
  return describePortHolder(port);
}

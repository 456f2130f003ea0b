import type { LookupAddress } from "node:dns";
import { constants, createReadStream } from "node:fs";
import { open as openFile, rm } from "node:fs/promises";
import type { ClientRequest, IncomingMessage } from "node:http";
import { isIP, type LookupFunction, type Socket } from "node:net";
import type { Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { log, StepError } from "../lib/log.js";
import { type ProxyChoice, proxyFor } from "./proxy-env.js";
import { isLocalHost, redirectProblem, shownUrl } from "./url-policy.js";

// The install step's download client: node:http and node:https, with the
// workspace's proxy settings (install/proxy-env.ts) and CONNECT tunnels for https://
// through an http:// proxy, because Node's fetch reads no proxy variable.
// Only the install step uses it; the loopback and Coder agent calls in
// lib/http.ts never go through a proxy. Node.js's network, TLS and hash
// modules are loaded where a download first needs them, not when the install
// starts: an install whose tools are in place downloads nothing, and loading
// them took about 5 ms of its start.

export interface Downloaded {
  sha256: string;
  bytes: number;
}

const IDLE_TIMEOUT_MS = 60_000;
/**
 * The most any one download may write to the home volume, which also holds
 * Goose's sessions and the chat: about eight times Goose's largest release
 * tarball and AgentAPI's binary (tens of MB each).
 */
const DOWNLOAD_MAX_BYTES = 512 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A failure no retry can fix: the answer is final or the URL is refused. */
class FinalError extends Error {}

// Errors of the local files (a file:// source, the destination) that a retry cannot fix.
const FINAL_FILE_ERRORS = new Set(["ENOENT", "EACCES", "EISDIR", "ENOSPC", "EROFS", "ELOOP"]);

function isFinal(error: unknown): boolean {
  return error instanceof FinalError || FINAL_FILE_ERRORS.has((error as NodeJS.ErrnoException).code ?? "");
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** The proxy as the log shows it: no user or password. */
function shown(choice: ProxyChoice): string {
  return `${choice.proxy.protocol}//${choice.proxy.host} (${choice.variable})`;
}

function proxyAuthorization(proxy: URL): Record<string, string> {
  if (proxy.username === "") return {};
  const user = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { "proxy-authorization": `Basic ${Buffer.from(user).toString("base64")}` };
}

/** A TCP connection to `target` through the proxy's CONNECT (RFC 9110, 9.3.6). */
async function tunnel(proxy: URL, target: URL): Promise<Socket> {
  const authority = `${target.hostname}:${target.port || "443"}`;
  const http = await import("node:http");
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: hostOf(proxy),
      port: proxy.port,
      method: "CONNECT",
      path: authority,
      headers: { host: authority, ...proxyAuthorization(proxy) },
      timeout: IDLE_TIMEOUT_MS,
    });
    request.once("connect", (response, socket) => {
      if (response.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(new Error(`the proxy answered CONNECT ${authority} with HTTP ${response.statusCode}`));
    });
    request.once("timeout", () => request.destroy(new Error(`the proxy did not answer CONNECT ${authority}`)));
    request.once("error", reject);
    request.end();
  });
}

/** The addresses a host name resolves to; none for an IP address, which needs no lookup. */
async function addressesOf(url: URL): Promise<LookupAddress[]> {
  const host = hostOf(url);
  if (isIP(host) !== 0) return [];
  const { lookup } = await import("node:dns/promises");
  try {
    return await lookup(host, { all: true });
  } catch (error) {
    throw new Error(`cannot resolve ${host} (${(error as NodeJS.ErrnoException).code})`);
  }
}

/**
 * A resolver that answers with `addresses` only: the connection goes to an
 * address redirectProblem saw, whatever the name resolves to by then (DNS
 * rebinding). TLS still checks the certificate against the name.
 */
function pinned(addresses: LookupAddress[]): LookupFunction {
  return (_host, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = addresses.filter((a) => family === 0 || a.family === family);
    const first = usable[0];
    if (first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`no IPv${family} address was checked`);
      error.code = "ENOTFOUND";
      return callback(error, "", 0);
    }
    if (options.all) return callback(null, usable);
    callback(null, first.address, first.family);
  };
}

/**
 * One GET of `url`, direct (to `addresses` when given) or through `choice`'s
 * proxy; resolves once the answer's headers are in.
 */
async function get(url: URL, choice: ProxyChoice | null, addresses: LookupAddress[]): Promise<IncomingMessage> {
  let request: ClientRequest;
  if (choice === null) {
    const lookup = addresses.length > 0 ? pinned(addresses) : undefined;
    const client = url.protocol === "https:" ? await import("node:https") : await import("node:http");
    request = client.request(url, { timeout: IDLE_TIMEOUT_MS, lookup });
  } else if (url.protocol === "http:") {
    // An http:// target goes to the proxy as an absolute URI (RFC 9112, 3.2.2).
    request = (await import("node:http")).request({
      host: hostOf(choice.proxy),
      port: choice.proxy.port,
      path: url.href,
      headers: { host: url.host, ...proxyAuthorization(choice.proxy) },
      timeout: IDLE_TIMEOUT_MS,
    });
  } else {
    const socket = await tunnel(choice.proxy, url);
    const host = hostOf(url);
    // TLS runs end to end inside the tunnel; the proxy sees only ciphertext.
    const secure = (await import("node:tls")).connect({ socket, host, servername: isIP(host) ? undefined : host });
    request = (await import("node:https")).request(url, { createConnection: () => secure, timeout: IDLE_TIMEOUT_MS });
  }
  return new Promise((resolve, reject) => {
    request.once("response", resolve);
    request.once("timeout", () => request.destroy(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)));
    request.once("error", reject);
    request.end();
  });
}

/**
 * Where a redirect to `target` connects, once redirectProblem allows it: the
 * addresses its name resolves to when the download connects to it itself
 * (none through a proxy, which resolves names on its own side). The target
 * is looked up only when its URL as written passes, the configured URL only
 * when a refusal might be lifted by its name being on the private network.
 */
async function checkRedirect(target: URL, from: URL, direct: boolean): Promise<LookupAddress[]> {
  let configured: Promise<string[]> | undefined;
  const judge = async (addresses: LookupAddress[]) => {
    const resolved = { target: addresses.map((a) => a.address), configured: [] as string[] };
    const problem = redirectProblem(target, from, resolved);
    if (problem === null || isLocalHost(from)) return problem;
    configured ??= addressesOf(from).then(
      (found) => found.map((a) => a.address),
      () => [],
    );
    return redirectProblem(target, from, { ...resolved, configured: await configured });
  };
  const asWritten = await judge([]);
  if (asWritten !== null) throw new FinalError(asWritten);
  const addresses = direct ? await addressesOf(target) : [];
  const problem = addresses.length > 0 ? await judge(addresses) : null;
  if (problem !== null) throw new FinalError(problem);
  return addresses;
}

/** The body of `url` after redirects, each of which must pass redirectProblem; refused at once when it says it is bigger than `maxBytes`. */
async function open(url: URL, env: NodeJS.ProcessEnv, maxBytes: number): Promise<Readable> {
  let current = url;
  let addresses: LookupAddress[] = [];
  for (let hop = 0; ; hop++) {
    if (current.protocol === "file:") return createReadStream(fileURLToPath(current));
    const choice = proxyFor(current, env);
    if (choice) log(`downloading ${shownUrl(current)} through the proxy ${shown(choice)}`);
    const response = await get(current, choice, addresses);
    const status = response.statusCode ?? 0;
    const length = Number(response.headers["content-length"] ?? Number.NaN);
    if (status === 200 && length > maxBytes) {
      response.destroy();
      throw new FinalError(tooBig(maxBytes, `${current.host} announced ${length} bytes`));
    }
    if (status === 200) return response;
    response.resume();
    const location = response.headers.location;
    if (!REDIRECTS.has(status) || location === undefined) {
      const message = `HTTP ${status} from ${current.host}`;
      throw status >= 400 && status < 500 && status !== 408 && status !== 429
        ? new FinalError(message)
        : new Error(message);
    }
    if (hop === MAX_REDIRECTS) throw new FinalError(`more than ${MAX_REDIRECTS} redirects`);
    current = new URL(location, current);
    addresses = await checkRedirect(current, url, proxyFor(current, env) === null);
  }
}

function tooBig(maxBytes: number, what: string): string {
  return `the download is larger than the ${maxBytes / 1024 / 1024} MiB a download may take (${what})`;
}

/** Streams `body` into a new file `dest` (never through a link there), hashing it on the way; fails past `maxBytes`. */
async function save(body: Readable, dest: string, maxBytes: number): Promise<Downloaded> {
  const [{ createHash }, { pipeline }] = await Promise.all([import("node:crypto"), import("node:stream/promises")]);
  const hash = createHash("sha256");
  let bytes = 0;
  await rm(dest, { force: true });
  const handle = await openFile(
    dest,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  // The stream closes the handle when it ends or fails.
  const file = handle.createWriteStream();
  await pipeline(
    body,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        bytes += chunk.length;
        if (bytes > maxBytes) throw new FinalError(tooBig(maxBytes, `more than ${maxBytes} bytes arrived`));
        hash.update(chunk);
        yield chunk;
      }
    },
    file,
  );
  return { sha256: hash.digest("hex"), bytes };
}

/**
 * Downloads `url` to the new file `dest` (mode 0600) and returns its SHA-256,
 * retrying failures a retry can fix; a failed download leaves no file. The
 * caller verifies the digest before anything runs or unpacks the file.
 * Messages show the URL without its user name and password.
 */
export async function downloadFile(
  url: string,
  dest: string,
  env: NodeJS.ProcessEnv,
  opts: { attempts?: number; maxBytes?: number } = {},
): Promise<Downloaded> {
  const attempts = opts.attempts ?? 4;
  const maxBytes = opts.maxBytes ?? DOWNLOAD_MAX_BYTES;
  const target = new URL(url);
  let lastError = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await save(await open(target, env, maxBytes), dest, maxBytes);
    } catch (error) {
      await rm(dest, { force: true });
      if (error instanceof StepError) throw error;
      lastError = (error as Error).message;
      if (isFinal(error)) break;
      if (attempt < attempts) {
        log(`download of ${shownUrl(url)} failed (${lastError}); retrying (${attempt}/${attempts - 1})`);
        await delay(1000 * 2 ** (attempt - 1));
      }
    }
  }
  const choice = proxyFor(target, env);
  throw new StepError(
    `downloading ${shownUrl(url)} failed (${lastError}). Check the download URL variable and the workspace's network egress${choice ? `, and the proxy ${shown(choice)}` : ""}.`,
  );
}

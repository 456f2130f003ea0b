import { BlockList, isIP } from "node:net";
import { StepError } from "../lib/log.js";

// Which proxy a download goes through, read from the environment the way curl
// reads it (curl's "ENVIRONMENT" section of curl(1) and docs/MANUAL.md
// "Environment Variables"; behaviour checked against curl 7.88):
// - https:// through https_proxy, else HTTPS_PROXY; http:// through
//   http_proxy, else HTTP_PROXY. curl ignores HTTP_PROXY in upper case
//   because a CGI program gets a request's "Proxy:" header under that name
//   (httpoxy); a coder_script is no CGI program, so both cases are read here.
// - A proxy without a scheme is http://, and without a port uses 1080, as
//   curl's -x does. Only http:// proxies are supported (CONNECT for https).
// - no_proxy, else NO_PROXY: a comma (or space) separated list; `*` alone
//   matches every host; a name matches itself and every subdomain, with or
//   without a leading dot; an IP matches that address and a CIDR range its
//   addresses. curl 7.88 ignores an entry with a port; here `host:port`
//   matches that host on that port only, and `[::1]` is read as `::1`.

export interface ProxyChoice {
  proxy: URL;
  /** The variable it came from, for messages. */
  variable: string;
}

function firstSet(env: NodeJS.ProcessEnv, names: string[]): { name: string; value: string } | null {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return null;
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** An entry's host and port: "example.com:8443" and "[::1]:80" carry a port, "::1" does not. */
function splitEntry(entry: string): { host: string; port: string | null } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1] as string, port: bracketed[2] ?? null };
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (withPort) return { host: withPort[1] as string, port: withPort[2] as string };
  return { host: entry, port: null };
}

/** Whether an IP address is `entry` (an address) or inside it (a CIDR range). */
function ipMatches(address: string, entry: string): boolean {
  const [network = "", bits, extra] = entry.split("/");
  const family = isIP(network);
  if (family === 0 || family !== isIP(address) || extra !== undefined) return false;
  const type = family === 6 ? "ipv6" : "ipv4";
  // BlockList compares addresses, not spellings: "::1" is "0:0:0:0:0:0:0:1".
  const list = new BlockList();
  if (bits === undefined) {
    list.addAddress(network, type);
  } else {
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 6 ? 128 : 32)) return false;
    list.addSubnet(network, Number(bits), type);
  }
  return list.check(address, type);
}

/** Whether `target` is exempt from the proxy under this no_proxy value. */
export function bypassesProxy(target: URL, noProxy: string): boolean {
  const host = unbracket(target.hostname).toLowerCase();
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  const targetIsIp = isIP(host) !== 0;
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return true;
    const split = splitEntry(entry);
    if (split.port !== null && split.port !== port) continue;
    const name = split.host.replace(/^\./, "").replace(/\.$/, "");
    if (targetIsIp) {
      if (ipMatches(host, name)) return true;
    } else if (name !== "" && (host === name || host.endsWith(`.${name}`))) {
      return true;
    }
  }
  return false;
}

function parseProxy(value: string, variable: string): URL {
  let proxy: URL;
  try {
    proxy = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw new StepError(`${variable} is not a proxy URL (${JSON.stringify(value)}); set it to http://HOST:PORT.`);
  }
  if (proxy.protocol !== "http:")
    throw new StepError(
      `${variable} names a ${proxy.protocol}// proxy; the module's downloads support http:// proxies only (https:// targets go through them with CONNECT). Set ${variable} to http://HOST:PORT.`,
    );
  if (proxy.port === "") proxy.port = "1080";
  return proxy;
}

/** The proxy a download of `target` goes through, or null for a direct connection. */
export function proxyFor(target: URL, env: NodeJS.ProcessEnv): ProxyChoice | null {
  if (target.protocol !== "http:" && target.protocol !== "https:") return null;
  const scheme = target.protocol === "https:" ? "https" : "http";
  const chosen = firstSet(env, [`${scheme}_proxy`, `${scheme.toUpperCase()}_PROXY`]);
  if (!chosen) return null;
  const noProxy = firstSet(env, ["no_proxy", "NO_PROXY"]);
  if (noProxy && bypassesProxy(target, noProxy.value)) return null;
  return { proxy: parseProxy(chosen.value, chosen.name), variable: chosen.name };
}

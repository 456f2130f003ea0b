// Which URLs the module downloads from, and how it shows them. The template's
// URLs are checked at plan time by the same rule (download_url_rule in
// main.tf); this copy checks where a redirect leads, which only the download
// sees.

import { isIP } from "node:net";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

const V4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/;

/** Loopback, private (RFC 1918, shared RFC 6598), link-local (cloud metadata at 169.254.169.254) or "this network". */
function localV4(a: number, b: number): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  );
}

/**
 * Whether a URL's host names this machine or its private network, as written
 * in the URL: `localhost` and its subdomains, and IPv4 and IPv6 addresses in
 * the loopback, private, shared and link-local ranges (IPv6: ::, ::1,
 * fc00::/7, fe80::/10, and those IPv4 ranges mapped). The URL parser has
 * already written every IPv4 form (2130706433, 0x7f.1) as a.b.c.d and IPv6
 * in brackets, compressed and in lower case.
 */
export function isLocalHost(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = V4.exec(host);
  if (v4) return localV4(Number(v4[1]), Number(v4[2]));
  if (!host.startsWith("[")) return false;
  const v6 = host.slice(1, -1);
  if (v6 === "::" || v6 === "::1" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6)) return true;
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(v6);
  if (!mapped) return false;
  const high = Number.parseInt(mapped[1] as string, 16);
  return localV4(high >> 8, high & 0xff);
}

/**
 * Whether an address as the resolver gives it ("10.0.0.5", "::1",
 * "::ffff:127.0.0.1") is on this machine or its private network, by
 * isLocalHost's ranges: the URL parser writes it in the form those are
 * checked in.
 */
export function isLocalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return isLocalHost(new URL(family === 6 ? `http://[${address}]/` : `http://${address}/`));
}

/** What the names of a redirect's target and of the configured URL resolved to; empty when they were not looked up. */
export interface Resolved {
  target: readonly string[];
  configured: readonly string[];
}

const NOT_LOOKED_UP: Resolved = { target: [], configured: [] };

/**
 * Why the download must not follow a redirect to `url`, or null when it may.
 * The one rule, for every download the module makes (docs/operations.md,
 * Verified downloads): a redirect may lead to this machine or its private
 * network only from a configured URL `from` that is there too, so that no
 * remote server can turn the download against a local service or the
 * cloud's metadata address; over https://, or over http:// only from
 * loopback to loopback (a local mirror). Never file://, which would let a
 * server make the module read a local file. A host is there when its URL
 * says so (isLocalHost) or, for a name, when an address it resolved to is
 * (`resolved`; download.ts looks names up where it connects itself, not
 * through a proxy, which resolves them on its own side).
 */
export function redirectProblem(url: URL, from: URL, resolved: Resolved = NOT_LOOKED_UP): string | null {
  const fromHere = isLocalHost(from) || resolved.configured.some(isLocalAddress);
  if (!fromHere) {
    const refused = `a redirect to ${url.protocol}//${url.host} is refused: downloads from ${from.host} are never redirected to this machine or its private network`;
    if (isLocalHost(url)) return refused;
    const local = resolved.target.find(isLocalAddress);
    if (local !== undefined) return `${refused} (${url.hostname} resolves to ${local})`;
  }
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname) && LOOPBACK_HOSTS.has(from.hostname)) return null;
  return `a redirect to ${url.protocol}//${url.host} is refused: downloads follow redirects only to https:// (or to http:// on loopback from a loopback URL)`;
}

// The scheme, then everything of the authority up to its last "@" (RFC 3986, 3.2.1).
const USER_INFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/** `url` as messages show it: a user name or password in it replaced by "***". */
export function shownUrl(url: string | URL): string {
  return String(url instanceof URL ? url.href : url).replace(USER_INFO, "$1***@");
}

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

/** Whether the IPv4 address whose first 16 bits are `group` is local: its first two octets decide. */
function localV4Group(group: number): boolean {
  return localV4(group >> 8, group & 0xff);
}

/**
 * The eight 16-bit groups of an IPv6 address as the URL parser writes it: hex
 * groups, at most one "::", never a dotted IPv4 tail (it writes ::ffff:1.2.3.4
 * as ::ffff:102:304).
 */
function ipv6Groups(v6: string): number[] {
  const [head = "", tail] = v6.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

// IPv6 prefixes (their first six groups) whose last 32 bits are an IPv4
// address, the one a connection to them ends up at.
const V4_IN_LAST_32_BITS: readonly (readonly number[])[] = [
  [0, 0, 0, 0, 0, 0], // IPv4-compatible ::/96 (RFC 4291 2.5.5.1, deprecated); :: and ::1 are 0.0.0.0 and 0.0.0.1 in it
  [0, 0, 0, 0, 0, 0xffff], // IPv4-mapped ::ffff:0:0/96 (RFC 4291 2.5.5.2)
  [0, 0, 0, 0, 0xffff, 0], // SIIT IPv4-translated ::ffff:0:0:0/96 (RFC 2765)
  [0x64, 0xff9b, 0, 0, 0, 0], // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the gateway connects to that IPv4
];

/**
 * Whether an IPv6 address (its eight groups) is on this machine or its private
 * network. Deciding from the groups, not the text, catches every way of
 * writing one; an address that carries an IPv4 address is judged by it.
 */
function localV6(groups: readonly number[]): boolean {
  const startsWith = (prefix: readonly number[]) => prefix.every((g, i) => groups[i] === g);
  if (V4_IN_LAST_32_BITS.some(startsWith)) return localV4Group(groups[6]);
  // 6to4 2002::/16 (RFC 3056): 2002:AABB:CCDD::/48 is reached through the 6to4 router at IPv4 A.B.C.D.
  const first = groups[0];
  if (first === 0x2002) return localV4Group(groups[1]);
  // Local-use NAT64 64:ff9b:1::/48 (RFC 8215): this network's own translator, to whatever it maps.
  if (startsWith([0x64, 0xff9b, 1])) return true;
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7 (RFC 4193)
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10 (RFC 4291)
    (first & 0xffc0) === 0xfec0 // site-local fec0::/10 (deprecated by RFC 3879, still routed on some networks)
  );
}

/**
 * Whether a URL's host names this machine or its private network, as written
 * in the URL: `localhost` and its subdomains, IPv4 addresses in the loopback,
 * private, shared, link-local and "this network" ranges (localV4), and IPv6
 * addresses that are local (::, ::1, fc00::/7, fe80::/10, site-local
 * fec0::/10, local-use NAT64 64:ff9b:1::/48) or carry such an IPv4 address
 * (IPv4-mapped ::ffff:0:0/96, SIIT ::ffff:0:0:0/96, IPv4-compatible ::/96,
 * NAT64 64:ff9b::/96, 6to4 2002::/16). The URL parser has already written
 * every IPv4 form (2130706433, 0x7f.1) as a.b.c.d and IPv6 in brackets,
 * compressed, in lower case and in hex groups only.
 */
export function isLocalHost(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = V4.exec(host);
  if (v4) return localV4(Number(v4[1]), Number(v4[2]));
  if (!host.startsWith("[")) return false;
  return localV6(ipv6Groups(host.slice(1, -1)));
}

/**
 * Whether an address as the resolver gives it ("10.0.0.5", "::1",
 * "::ffff:127.0.0.1", "fe80::1%eth0") is on this machine or its private
 * network, by isLocalHost's ranges: the URL parser writes it in the form
 * those are checked in. A zone (%eth0) only names the interface, and a URL
 * cannot hold one, so the address without it decides.
 */
export function isLocalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return isLocalHost(new URL(`http://${address}/`));
  return isLocalHost(new URL(`http://[${address.split("%")[0]}]/`));
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

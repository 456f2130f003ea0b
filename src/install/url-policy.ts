// Which URLs the module downloads from, and how it shows them. The template's
// URLs are checked at plan time by the same rule (download_url_rule in
// main.tf); this copy checks where a redirect leads, which only the download
// sees.

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Why the download must not follow a redirect to `url`, or null when it may:
 * https://, or http:// on this machine's loopback (a local mirror) when the
 * configured URL `from` was on loopback too, so that no remote server can
 * send the download to a local service. Never file://, which would let a
 * server make the module read a local file.
 */
export function redirectProblem(url: URL, from: URL): string | null {
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

// Which URLs the module downloads from. The template's URLs are checked at
// plan time by the same rule (download_url_rule in variables.tf); this copy
// checks where a redirect leads, which only the download sees.

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Why the download must not follow a redirect to `url`, or null when it may:
 * https://, or http:// on this machine's loopback (a local mirror). Never
 * file://, which would let a server make the module read a local file.
 */
export function redirectProblem(url: URL): string | null {
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return `a redirect to ${url.protocol}//${url.host} is refused: downloads follow redirects only to https:// (or http:// on loopback)`;
}

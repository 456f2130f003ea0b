import { describe, expect, it } from "vitest";
import { bypassesProxy, proxyFor } from "../../../src/install/proxy-env.js";

// Rows marked "curl" were checked against curl 7.88 (`curl -v` names the
// proxy it uses); the others are where the module deliberately differs.

const [GH, MIRROR, UP, LOW] = ["https://github.com/x", "http://mirror.internal/x", "http://up:3128", "http://low:3128"];

describe("proxyFor", () => {
  const proxy = (url: string, env: NodeJS.ProcessEnv) => {
    const choice = proxyFor(new URL(url), env);
    return choice ? `${choice.proxy.href} from ${choice.variable}` : null;
  };

  it.each([
    // curl: https:// reads https_proxy first, then HTTPS_PROXY.
    [GH, { https_proxy: LOW, HTTPS_PROXY: UP }, `${LOW}/ from https_proxy`],
    [GH, { HTTPS_PROXY: UP }, `${UP}/ from HTTPS_PROXY`],
    // curl: an http:// target does not use the https proxy, and the reverse.
    [MIRROR, { HTTPS_PROXY: UP }, null],
    [GH, { http_proxy: LOW }, null],
    [MIRROR, { http_proxy: LOW }, `${LOW}/ from http_proxy`],
    // curl ignores HTTP_PROXY (httpoxy); a coder_script is no CGI program, so the module reads it.
    [MIRROR, { HTTP_PROXY: UP }, `${UP}/ from HTTP_PROXY`],
    // curl: no scheme means http://, no port means 1080.
    [GH, { https_proxy: "proxy.corp" }, "http://proxy.corp:1080/ from https_proxy"],
    [GH, { https_proxy: "proxy.corp:8080" }, "http://proxy.corp:8080/ from https_proxy"],
    // An empty variable counts as unset.
    [GH, { https_proxy: "", HTTPS_PROXY: UP }, `${UP}/ from HTTPS_PROXY`],
    // no_proxy wins over NO_PROXY, and exempts a host from either proxy.
    [GH, { HTTPS_PROXY: UP, no_proxy: "github.com", NO_PROXY: "" }, null],
    [GH, { HTTPS_PROXY: UP, no_proxy: "example.com", NO_PROXY: "github.com" }, `${UP}/ from HTTPS_PROXY`],
    [GH, { HTTPS_PROXY: UP, NO_PROXY: "github.com" }, null],
    // curl: loopback is proxied unless no_proxy says otherwise.
    ["http://127.0.0.1:8080/x", { http_proxy: LOW }, `${LOW}/ from http_proxy`],
    // file:// never goes through a proxy.
    ["file:///srv/mirror/x", { http_proxy: LOW, https_proxy: LOW }, null],
  ] as const)("%s with %j: %s", (url, env, expected) => {
    expect(proxy(url, env)).toBe(expected);
  });

  it("keeps the proxy's credentials for its Proxy-Authorization", () => {
    const choice = proxyFor(new URL(GH), { https_proxy: "http://user:p%40ss@proxy:3128" });
    expect(choice?.proxy.username).toBe("user");
    expect(choice?.proxy.password).toBe("p%40ss");
  });

  it.each([
    ["socks5://proxy:1080", /socks5:\/\/ proxy; the module's downloads support http:\/\/ proxies only/],
    ["https://proxy:443", /https:\/\/ proxy; .*Set HTTPS_PROXY to http:\/\/HOST:PORT/],
    ["http://[bad", /HTTPS_PROXY is not a proxy URL/],
  ])("refuses the proxy %s with a message naming the variable", (value, message) => {
    expect(() => proxyFor(new URL(GH), { HTTPS_PROXY: value })).toThrow(message);
  });
});

describe("bypassesProxy", () => {
  it.each([
    // curl: `*` alone matches every host.
    ["https://github.com/", "*", true],
    // curl: a name matches itself and its subdomains, with or without a leading dot, on a label boundary.
    ["https://example.invalid/", "example.invalid", true],
    ["https://a.example.invalid/", "example.invalid", true],
    ["https://example.invalid/", ".example.invalid", true],
    ["https://a.example.invalid/", ".example.invalid", true],
    ["https://example.invalid/", "xample.invalid", false],
    ["https://badexample.invalid/", "example.invalid", false],
    // curl: entries are trimmed; commas separate them.
    ["https://a.example.invalid/", " foo , example.invalid ", true],
    ["https://GitHub.com/", "github.COM", true],
    // curl: an IP matches that address, a CIDR range its addresses, IPv6 without brackets.
    ["http://127.0.0.1:8080/", "127.0.0.1", true],
    ["http://127.0.0.1:8080/", "127.0.0.0/8", true],
    ["http://10.1.2.3/", "10.0.0.0/16", false],
    ["http://[::1]:8080/", "127.0.0.0/8", false],
    ["http://[::1]:8080/", "::1", true],
    ["http://[::1]:8080/", "::/0", true],
    // A name entry never matches an address, nor an address a name.
    ["http://127.0.0.1/", "localhost", false],
    ["http://localhost/", "127.0.0.1", false],
    // Where the module differs from curl 7.88: [::1] is read as ::1, and host:port matches that port only.
    ["http://[::1]:8080/", "[::1]", true],
    ["https://mirror.internal/", "mirror.internal:443", true],
    ["https://mirror.internal:8443/", "mirror.internal:443", false],
    ["http://127.0.0.1:8080/", "127.0.0.1:8080", true],
    ["http://[::1]:8080/", "[::1]:8080", true],
    ["http://[::1]:8081/", "[::1]:8080", false],
    // Nonsense entries match nothing.
    ["http://10.1.2.3/", "10.0.0.0/99", false],
    ["http://10.1.2.3/", "10.0.0.0/8/1", false],
    ["https://github.com/", ",, ,", false],
  ] as const)("%s with no_proxy %j: %s", (url, noProxy, expected) => {
    expect(bypassesProxy(new URL(url), noProxy)).toBe(expected);
  });
});

import { describe, expect, it } from "vitest";
import { gooseMember } from "../../../src/install/goose-archive.js";
import { isLocalAddress, redirectProblem, shownUrl } from "../../../src/install/url-policy.js";
import { minimalEnv } from "../../../src/lib/minimal-env.js";

it.each([
  // redirect target, configured URL, allowed
  ["https://objects.githubusercontent.com/x", "https://github.com/r", true],
  ["https://objects.githubusercontent.com/x", "http://127.0.0.1:8080/r", true],
  ["http://127.0.0.1:8080/x", "http://127.0.0.1:8080/r", true],
  ["http://localhost/x", "http://[::1]:9/r", true],
  ["http://[::1]:9/x", "https://localhost:8443/r", true],
  ["http://127.0.0.1:8080/x", "https://github.com/r", false],
  ["http://localhost/x", "https://mirror.example.com/r", false],
  ["http://[::1]:9/x", "https://mirror.example.com/r", false],
  ["http://objects.githubusercontent.com/x", "http://127.0.0.1:8080/r", false],
  ["http://localhost.evil.example/x", "http://localhost/r", false],
  ["file:///etc/shadow", "http://localhost/r", false],
  ["ftp://mirror/x", "https://github.com/r", false],
  // https:// to this machine or its private network: only from there.
  ["https://127.0.0.1:8443/x", "https://github.com/r", false],
  ["https://localhost/x", "https://github.com/r", false],
  ["https://admin.localhost/x", "https://github.com/r", false],
  ["https://[::1]/x", "https://github.com/r", false],
  ["https://2130706433/x", "https://github.com/r", false], // 127.0.0.1 as one number
  ["https://0x7f.1/x", "https://github.com/r", false],
  ["https://10.1.2.3/x", "https://github.com/r", false],
  ["https://172.16.0.1/x", "https://github.com/r", false],
  ["https://172.31.255.255/x", "https://github.com/r", false],
  ["https://192.168.1.1/x", "https://github.com/r", false],
  ["https://169.254.169.254/latest/meta-data", "https://github.com/r", false],
  ["https://100.64.0.1/x", "https://github.com/r", false],
  ["https://0.0.0.0/x", "https://github.com/r", false],
  ["https://[fd00::1]/x", "https://github.com/r", false],
  ["https://[fe80::1]/x", "https://github.com/r", false],
  ["https://[::ffff:127.0.0.1]/x", "https://github.com/r", false],
  ["https://[::ffff:10.0.0.1]/x", "https://github.com/r", false],
  // IPv4 carried in IPv6 is judged as that IPv4; local-use NAT64 and site-local are local.
  ["https://[::ffff:0:127.0.0.1]/x", "https://github.com/r", false], // SIIT, RFC 2765
  ["https://[::127.0.0.1]/x", "https://github.com/r", false], // IPv4-compatible, RFC 4291
  ["https://[64:ff9b::169.254.169.254]/latest/meta-data", "https://github.com/r", false], // NAT64, RFC 6052
  ["https://[64:ff9b:1::1]/x", "https://github.com/r", false], // local-use NAT64, RFC 8215
  ["https://[2002:7f00:1::]/x", "https://github.com/r", false], // 6to4, RFC 3056
  ["https://[fec0::1]/x", "https://github.com/r", false], // site-local, RFC 3879
  ["https://172.32.0.1/x", "https://github.com/r", true],
  ["https://100.128.0.1/x", "https://github.com/r", true],
  ["https://[2606:4700::1111]/x", "https://github.com/r", true],
  ["https://[::ffff:8.8.8.8]/x", "https://github.com/r", true],
  ["https://[64:ff9b::8.8.8.8]/x", "https://github.com/r", true],
  ["https://[2002:808:808::1]/x", "https://github.com/r", true],
  ["https://10.0.0.9/x", "https://10.0.0.5/mirror", true],
  ["https://mirror.internal/x", "https://10.0.0.5/mirror", true],
])("redirectProblem %s from %s allowed: %s", (url, from, allowed) => {
  expect(redirectProblem(new URL(url), new URL(from)) === null).toBe(allowed);
});

it.each([
  // redirect target, configured URL, the addresses each one's name resolved to, allowed
  ["https://objects.githubusercontent.com/x", "https://github.com/r", ["185.199.108.133"], [], true],
  ["https://v6.example.com/x", "https://github.com/r", ["2606:4700::1111", "203.0.113.7"], [], true],
  ["https://internal.example.com/x", "https://github.com/r", ["10.0.0.5"], [], false],
  ["https://meta.example.com/x", "https://github.com/r", ["169.254.169.254"], [], false],
  ["https://rebind.example.com/x", "https://github.com/r", ["203.0.113.7", "127.0.0.1"], [], false],
  ["https://v6.example.com/x", "https://github.com/r", ["::1"], [], false],
  ["https://v6.example.com/x", "https://github.com/r", ["fd00::1"], [], false],
  ["https://v6.example.com/x", "https://github.com/r", ["fe80::1"], [], false],
  ["https://mapped.example.com/x", "https://github.com/r", ["::ffff:127.0.0.1"], [], false],
  ["https://mapped.example.com/x", "https://github.com/r", ["::ffff:7f00:1"], [], false],
  ["https://v6.example.com/x", "https://github.com/r", ["fe80::1%eth0"], [], false],
  // A configured URL whose name is on the private network may lead there.
  ["https://cdn.corp.example/x", "https://artifactory.corp.example/r", ["10.0.0.9"], ["10.0.0.5"], true],
  ["https://10.0.0.9/x", "https://artifactory.corp.example/r", [], ["10.0.0.5"], true],
  ["https://cdn.corp.example/x", "https://artifactory.corp.example/r", ["10.0.0.9"], ["198.51.100.1"], false],
  // Still https:// only.
  ["http://cdn.corp.example/x", "https://artifactory.corp.example/r", ["10.0.0.9"], ["10.0.0.5"], false],
])("redirectProblem %s from %s, resolved to %j from %j, allowed: %s", (url, from, target, configured, allowed) => {
  expect(redirectProblem(new URL(url), new URL(from), { target, configured }) === null).toBe(allowed);
});

it("redirectProblem names the address a refused name resolved to", () => {
  const url = new URL("https://rebind.example.com/x");
  const resolved = { target: ["203.0.113.7", "10.1.2.3"], configured: [] };
  expect(redirectProblem(url, new URL("https://github.com/r"), resolved)).toBe(
    "a redirect to https://rebind.example.com is refused: downloads from github.com are never redirected to this machine or its private network (rebind.example.com resolves to 10.1.2.3)",
  );
});

it.each([
  ["127.0.0.1", true],
  ["10.255.0.1", true],
  ["192.168.0.1", true],
  ["::", true],
  ["fc00::2", true],
  ["::ffff:192.168.1.1", true],
  ["0:0:0:0:0:ffff:7f00:1", true],
  ["::ffff:0:127.0.0.1", true],
  ["::ffff:0:a00:1", true],
  ["::127.0.0.1", true],
  ["::7f00:1", true],
  ["64:ff9b::7f00:1", true],
  ["64:ff9b::a9fe:a9fe", true],
  ["64:ff9b::192.168.0.1", true],
  ["64:ff9b:1::808:808", true],
  ["2002:7f00:1::", true],
  ["2002:a9fe:a9fe::1", true],
  ["fec0::1", true],
  ["feff::1", true],
  ["fe80::1%eth0", true],
  ["::1%lo", true],
  ["8.8.8.8", false],
  ["2001:4860:4860::8888", false],
  ["::ffff:8.8.8.8", false],
  ["::ffff:0:808:808", false],
  ["::8.8.8.8", false],
  ["64:ff9b::808:808", false],
  ["64:ff9b::8.8.8.8", false],
  ["64:ff9b:2::1", false],
  ["2002:808:808::1", false],
  ["2606:4700::1111%eth0", false],
  ["fc::1", false], // 00fc::, not fc00::/7
  ["fe8::1", false], // 0fe8::, not fe80::/10
  ["localhost", false],
  ["", false],
])("isLocalAddress %s: %s", (address, local) => {
  expect(isLocalAddress(address)).toBe(local);
});

it.each([
  ["https://user:token@mirror.example.com/v1/a", "https://***@mirror.example.com/v1/a"],
  ["https://token@mirror.example.com", "https://***@mirror.example.com"],
  ["https://u:p%40ss@mirror.example.com:8443/a?x=1#f", "https://***@mirror.example.com:8443/a?x=1#f"],
  ["https://mirror.example.com/a@b", "https://mirror.example.com/a@b"],
  ["https://mirror.example.com/a?to=x@y", "https://mirror.example.com/a?to=x@y"],
  ["file:///srv/mirror/agentapi", "file:///srv/mirror/agentapi"],
])("shownUrl %s -> %s", (url, shown) => {
  expect(shownUrl(url)).toBe(shown);
  expect(shownUrl(new URL(url))).not.toMatch(/token|p%40ss|\/\/u:/);
});

describe("gooseMember", () => {
  it.each([
    // `tar -cjf goose.tar.bz2 -C goose-package .`, as upstream packs it.
    ["./\n./goose\n", "./goose"],
    ["goose\n", "goose"],
  ])("finds the binary in %j", (listing, expected) => {
    expect(gooseMember(listing, "https://m/goose.tar.bz2")).toBe(expected);
  });

  it.each([
    ["./\n./bin/goose\n", /has no goose at its top level/],
    ["../goose\n", /has no goose at its top level/],
    ["/goose\n", /has no goose at its top level/],
    ["", /has no goose at its top level/],
    ["./goose\ngoose\n", /holds goose more than once/],
  ])("refuses %j", (listing, message) => {
    expect(() => gooseMember(listing, "https://m/goose.tar.bz2")).toThrow(message);
  });
});

describe("minimalEnv", () => {
  // kept and net pass unchanged; coder, secrets and the shells' startup files must not.
  const kept = { PATH: "/usr/bin:/bin", HOME: "/home/coder", USER: "coder", LANG: "C.UTF-8", LC_ALL: "C.UTF-8" };
  const net = { HTTPS_PROXY: "http://proxy:3128", no_proxy: "localhost", SSL_CERT_FILE: "/etc/ssl/corp.pem" };
  const coder = { CODER: "true", CODER_AGENT_TOKEN: "secret-token", CODER_AGENT_URL: "https://coder.example.com" };
  const secrets = { CODER_WORKSPACE_NAME: "ws", ANTHROPIC_API_KEY: "sk-secret", GITHUB_TOKEN: "ghp-secret" };
  const startup = { BASH_ENV: "/home/coder/.bashrc", ENV: "/home/coder/.shrc" };

  it("passes what finds tools and reaches the network (proxies in lower case too, for curl), no Coder or user secret", () => {
    const workspace = { ...kept, ...net, ...coder, ...secrets, ...startup, NO_PROXY: "example.com" };
    const want = { ...kept, ...net, https_proxy: "http://proxy:3128", NO_PROXY: "example.com", GOOSE_VERSION: "v1" };
    expect(minimalEnv(workspace, { GOOSE_VERSION: "v1" })).toEqual(want);
  });
});

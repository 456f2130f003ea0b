import { describe, expect, it } from "vitest";
import { gooseMember } from "../../../src/install/goose-archive.js";
import { redirectProblem, shownUrl } from "../../../src/install/url-policy.js";
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
  ["https://172.32.0.1/x", "https://github.com/r", true],
  ["https://100.128.0.1/x", "https://github.com/r", true],
  ["https://[2606:4700::1111]/x", "https://github.com/r", true],
  ["https://[::ffff:8.8.8.8]/x", "https://github.com/r", true],
  ["https://10.0.0.9/x", "https://10.0.0.5/mirror", true],
  ["https://mirror.internal/x", "https://10.0.0.5/mirror", true],
])("redirectProblem %s from %s allowed: %s", (url, from, allowed) => {
  expect(redirectProblem(new URL(url), new URL(from)) === null).toBe(allowed);
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

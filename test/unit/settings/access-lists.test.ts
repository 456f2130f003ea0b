import { describe, expect, it } from "vitest";
import { type AccessInput, buildAccessLists } from "../../../src/settings/access-lists.js";

// The Host and Origin headers each way into AgentAPI carries, written out as
// Coder produces them (see the comment at the top of src/settings/access-lists.ts).
const CODER = "coder.example.com";
const none = { proxyUri: undefined, agentName: undefined, extraHosts: [], extraOrigins: [] };
const base: AccessInput = { port: 3284, accessUrl: `https://${CODER}`, subdomain: false, appSlug: "goose", ...none };
const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];
const LOOPBACK_ORIGINS = ["http://localhost:3284", "http://127.0.0.1:3284", "http://[::1]:3284"];
// vscodeProxyURI (coderd/agentapi/manifest.go) for agent "main", workspace "dev", owner "alice".
const PROXY_URI = "https://{{port}}--main--dev--alice.apps.example.com";
const APP = "--dev--alice.apps.example.com";

describe("buildAccessLists", () => {
  it.each<[string, Partial<AccessInput>, string[]]>([
    ["a path-based app: loopback and the access URL's host", {}, [...LOOPBACK, CODER]],
    [
      "an access URL with a port: the name alone (AgentAPI ignores ports)",
      { accessUrl: `https://${CODER}:8443` },
      [...LOOPBACK, CODER],
    ],
    [
      "an IPv6 access URL: in brackets, as AgentAPI parses entries",
      { accessUrl: "http://[2001:db8::7]:3000" },
      [...LOOPBACK, "[2001:db8::7]"],
    ],
    ["a local deployment on localhost: no duplicate", { accessUrl: "http://localhost:3000" }, LOOPBACK],
    [
      "a subdomain app: its host with and without the agent's name, not the access URL's",
      { subdomain: true, proxyUri: PROXY_URI, agentName: "main" },
      [...LOOPBACK, `goose--main${APP}`, `goose${APP}`],
    ],
    [
      "a subdomain app under a *--suffix wildcard, with a port on the access URL",
      { subdomain: true, proxyUri: "https://{{port}}--main--dev--alice--apps.example.com:8443", agentName: "main" },
      [...LOOPBACK, "goose--main--dev--alice--apps.example.com", "goose--dev--alice--apps.example.com"],
    ],
    [
      "a subdomain app when the agent's name is unknown: the form with it only",
      { subdomain: true, proxyUri: PROXY_URI },
      [...LOOPBACK, `goose--main${APP}`],
    ],
    [
      "a subdomain app whose VSCODE_PROXY_URI a template replaced with a path: nothing guessed",
      { subdomain: true, proxyUri: "./proxy/{{port}}", agentName: "main" },
      LOOPBACK,
    ],
    [
      "the template's additions, after the defaults, without duplicates in any case",
      { extraHosts: ["proxy.example.com", "CODER.example.com", "[fd00::1]"] },
      [...LOOPBACK, CODER, "proxy.example.com", "[fd00::1]"],
    ],
    ["a * among the additions: * alone", { extraHosts: ["proxy.example.com", "*"] }, ["*"]],
    ["an access URL that is not a URL: loopback only", { accessUrl: "not a url" }, LOOPBACK],
  ])("hosts for %s", (_, input, hosts) => {
    expect(buildAccessLists({ ...base, ...input }).hosts).toEqual(hosts);
  });

  it.each<[string, Partial<AccessInput>, string[]]>([
    ["the defaults: loopback on the port only, not the dashboard", {}, LOOPBACK_ORIGINS],
    [
      "a dashboard on a port other than the scheme's: still not approved",
      { accessUrl: `https://${CODER}:8443/` },
      LOOPBACK_ORIGINS,
    ],
    ["another AgentAPI port", { port: 4000 }, ["http://localhost:4000", "http://127.0.0.1:4000", "http://[::1]:4000"]],
    [
      "the template's additions, after the defaults, without duplicates in any case",
      { extraOrigins: ["https://proxy.example.com", `https://${CODER}`, "HTTPS://PROXY.example.com"] },
      [...LOOPBACK_ORIGINS, "https://proxy.example.com", `https://${CODER}`],
    ],
    ["a * among the additions", { extraOrigins: ["*"] }, ["*"]],
  ])("origins for %s", (_, input, origins) => {
    expect(buildAccessLists({ ...base, ...input }).origins).toEqual(origins);
  });

  it.each<[string, Partial<AccessInput>, RegExp | null]>([
    ["the defaults", {}, null],
    ["a * host", { extraHosts: ["*"] }, /DNS rebinding/],
    ["a * origin", { extraOrigins: ["*"] }, /any web page/],
    ["a subdomain app without a wildcard app URL", { subdomain: true }, /VSCODE_PROXY_URI.*400/],
    [
      "a subdomain app with its host given by the template",
      { subdomain: true, extraHosts: ["goose.example.com"] },
      null,
    ],
    ["an access URL that is not a URL", { accessUrl: "" }, /not a URL/],
  ])("warnings for %s", (_, input, warning) => {
    const { warnings } = buildAccessLists({ ...base, ...input });
    if (warning === null) expect(warnings).toEqual([]);
    else expect(warnings).toEqual([expect.stringMatching(warning)]);
  });

  it("never puts a space, a comma or a port in a host entry (AgentAPI refuses to start on them)", () => {
    const ports = { accessUrl: `https://${CODER}:8443`, proxyUri: `${PROXY_URI}:8443` };
    const { hosts } = buildAccessLists({ ...base, ...ports, subdomain: true, agentName: "main" });
    for (const host of hosts) expect(host).not.toMatch(/[\s,]|:\d+$/);
  });
});

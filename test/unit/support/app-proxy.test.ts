import { describe, expect, it } from "vitest";
import {
  findApp,
  type ProxiedApp,
  parseSubdomainApp,
  requestHeaders,
  responseHeaders,
  routeRequest,
} from "../../../support/workspace/app-proxy.js";

// The app proxy stand-in's rules, each as coder/coder states it (see the
// comments in support/workspace/app-proxy.ts).
const WILDCARD = "*.apps.example.test";

const app = (agent: string) => ({ owner: "alice", workspace: "dev", agent, slug: "goose" });
const CODER = "coder.example.test";
const SUB = "goose--main--dev--alice.apps.example.test";

describe("routeRequest", () => {
  it.each([
    ["path app, by agent name", CODER, "/@alice/dev.main/apps/goose/chat/embed/", "path", "main", "/chat/embed/"],
    ["%40 for @, query kept", `${CODER}:8080`, "/%40alice/dev.0d5b/apps/goose/e?x=1", "path", "0d5b", "/e?x=1"],
    ["no agent, app root without its slash", CODER, "/@alice/dev/apps/goose", "path", "", ""],
    ["the agent part splits at the first dot", CODER, "/@alice/dev.main.x/apps/goose/", "path", "main.x", "/"],
    ["any other host still reaches path-based apps", "10.0.0.7", "/@alice/dev.main/apps/goose/", "path", "main", "/"],
    ["a subdomain app keeps the whole path", SUB, "/chat/embed/", "subdomain", "main", "/chat/embed/"],
    ["subdomain host, any case or port", "Goose--Dev--Alice.apps.example.test:443", "/", "subdomain", "", "/"],
  ])("%s", (_, host, path, kind, agent, rest) => {
    expect(routeRequest(host, path, WILDCARD)).toEqual({ kind, app: app(agent), rest });
  });

  it.each([
    ["an unparsable subdomain", "goose.apps.example.test", "/", WILDCARD],
    ["the dashboard itself", CODER, "/workspaces", WILDCARD],
    ["a subdomain app without a wildcard host", SUB, "/", null],
  ])("routes nothing for %s", (_, host, path, wildcard) => {
    expect(routeRequest(host, path, wildcard)).toEqual({ kind: "none" });
  });
});

it.each([
  ["goose--main--dev--alice", app("main")],
  ["goose--dev--alice", app("")],
  ["pfx---goose--main--dev--alice", app("main")],
  ["goose--alice", null],
  ["a--b--c--d--e", null],
])("parseSubdomainApp %s", (subdomain, want) => {
  expect(parseSubdomainApp(subdomain)).toEqual(want);
});

describe("findApp", () => {
  const known: ProxiedApp = { owner: "alice", workspace: "dev", agentName: "main", slug: "goose", url: "http://l/" };
  it.each([
    ["by agent name", "main"],
    ["by agent ID", "0d5b"],
    ["the agent part plays no part for a slug", "other"],
  ])("%s", (_, agent) => {
    expect(findApp([known], app(agent))).toEqual(known);
  });
  it.each([
    ["another owner", { owner: "mallory" }],
    ["another workspace", { workspace: "prod" }],
    ["another slug", { slug: "goose-cli" }],
  ])("not %s", (_, other) => {
    expect(findApp([known], { ...app("main"), ...other })).toBeNull();
  });
});

describe("responseHeaders", () => {
  it("drops the app's CORS answer and its Vary values, keeps the rest", () => {
    expect(
      responseHeaders({
        "access-control-allow-origin": "http://coder.example.test",
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": "GET",
        "access-control-allow-headers": "content-type",
        vary: "Origin, Accept-Encoding, access-control-request-method",
        "content-type": "text/html",
        connection: "keep-alive",
      }),
    ).toEqual({ vary: "Accept-Encoding", "content-type": "text/html" });
  });

  it("drops Vary when nothing is left of it", () => {
    expect(responseHeaders({ vary: "Origin", "cache-control": "no-cache" })).toEqual({ "cache-control": "no-cache" });
  });
});

it("requestHeaders keeps the browser's Host and adds the client to X-Forwarded-For", () => {
  const browser = { host: CODER, "proxy-connection": "keep-alive", origin: `http://${CODER}` };
  const want = { host: CODER, origin: `http://${CODER}`, "x-forwarded-for": "127.0.0.1" };
  expect(requestHeaders(browser, "127.0.0.1")).toEqual(want);
  const forwarded = { host: "h", "x-forwarded-for": "10.0.0.1" };
  expect(requestHeaders(forwarded, "127.0.0.1")["x-forwarded-for"]).toBe("10.0.0.1, 127.0.0.1");
});

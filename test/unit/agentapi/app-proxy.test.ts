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

describe("routeRequest", () => {
  it.each([
    [
      "a path-based app named by agent name",
      "coder.example.test",
      "/@alice/dev.main/apps/goose/chat/embed/",
      { kind: "path", app: { owner: "alice", workspace: "dev", agent: "main", slug: "goose" }, rest: "/chat/embed/" },
    ],
    [
      "%40 for @, and the query kept",
      "coder.example.test:8080",
      "/%40alice/dev.0d5b/apps/goose/events?x=1",
      { kind: "path", app: { owner: "alice", workspace: "dev", agent: "0d5b", slug: "goose" }, rest: "/events?x=1" },
    ],
    [
      "no agent, app root without its slash",
      "coder.example.test",
      "/@alice/dev/apps/goose",
      { kind: "path", app: { owner: "alice", workspace: "dev", agent: "", slug: "goose" }, rest: "" },
    ],
    [
      "the agent part splits at the first dot",
      "coder.example.test",
      "/@alice/dev.main.x/apps/goose/",
      { kind: "path", app: { owner: "alice", workspace: "dev", agent: "main.x", slug: "goose" }, rest: "/" },
    ],
    [
      "any other host still reaches path-based apps",
      "10.0.0.7",
      "/@alice/dev.main/apps/goose/",
      { kind: "path", app: { owner: "alice", workspace: "dev", agent: "main", slug: "goose" }, rest: "/" },
    ],
    [
      "a subdomain app keeps the whole path",
      "goose--main--dev--alice.apps.example.test",
      "/chat/embed/",
      {
        kind: "subdomain",
        app: { owner: "alice", workspace: "dev", agent: "main", slug: "goose" },
        rest: "/chat/embed/",
      },
    ],
    [
      "a subdomain app's host is matched without case or port",
      "Goose--Dev--Alice.apps.example.test:443",
      "/",
      { kind: "subdomain", app: { owner: "alice", workspace: "dev", agent: "", slug: "goose" }, rest: "/" },
    ],
    ["an unparsable subdomain", "goose.apps.example.test", "/", { kind: "none" }],
    ["the dashboard itself", "coder.example.test", "/workspaces", { kind: "none" }],
  ])("%s", (_, host, path, want) => {
    expect(routeRequest(host, path, WILDCARD)).toEqual(want);
  });

  it("has no subdomain apps without a wildcard host", () => {
    expect(routeRequest("goose--main--dev--alice.apps.example.test", "/", null)).toEqual({ kind: "none" });
  });
});

describe("parseSubdomainApp", () => {
  it.each([
    ["goose--main--dev--alice", { slug: "goose", agent: "main", workspace: "dev", owner: "alice" }],
    ["goose--dev--alice", { slug: "goose", agent: "", workspace: "dev", owner: "alice" }],
    ["pfx---goose--main--dev--alice", { slug: "goose", agent: "main", workspace: "dev", owner: "alice" }],
    ["goose--alice", null],
    ["a--b--c--d--e", null],
  ])("%s", (subdomain, want) => {
    expect(parseSubdomainApp(subdomain)).toEqual(want);
  });
});

describe("findApp", () => {
  const app: ProxiedApp = {
    owner: "alice",
    workspace: "dev",
    agentName: "main",
    slug: "goose",
    url: "http://localhost:3284/",
  };
  it.each([
    ["by agent name", "main", app],
    ["by agent ID", "0d5b", app],
    ["the agent part plays no part for a slug", "other", app],
  ])("%s", (_, agent, want) => {
    expect(findApp([app], { owner: "alice", workspace: "dev", agent, slug: "goose" })).toEqual(want);
  });
  it.each([
    ["another owner", { owner: "mallory", workspace: "dev", agent: "main", slug: "goose" }],
    ["another workspace", { owner: "alice", workspace: "prod", agent: "main", slug: "goose" }],
    ["another slug", { owner: "alice", workspace: "dev", agent: "main", slug: "goose-cli" }],
  ])("not %s", (_, address) => {
    expect(findApp([app], address)).toBeNull();
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

describe("requestHeaders", () => {
  it("keeps the browser's Host and adds the client to X-Forwarded-For", () => {
    expect(
      requestHeaders(
        { host: "coder.example.test", "proxy-connection": "keep-alive", origin: "http://coder.example.test" },
        "127.0.0.1",
      ),
    ).toEqual({ host: "coder.example.test", origin: "http://coder.example.test", "x-forwarded-for": "127.0.0.1" });
    expect(requestHeaders({ host: "h", "x-forwarded-for": "10.0.0.1" }, "127.0.0.1")["x-forwarded-for"]).toBe(
      "10.0.0.1, 127.0.0.1",
    );
  });
});

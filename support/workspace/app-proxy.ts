// A stand-in for Coder's workspace app proxy: what a browser goes through to
// reach the web app of a coder_app, path-based or on its own subdomain. Read
// from coder/coder at cfc5eada (coderd/workspaceapps/proxy.go, request.go,
// appurl/appurl.go) and e33a7e52 (coderd/tailnet.go); each rule below names
// where it comes from.
//
// The browser uses it as its HTTP proxy, so every host name the browser asks
// for reaches it without DNS: the access URL's host, a wildcard app host, or any
// other name. Coderd answers under whatever name reaches it, and so does this.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One coder_app as Coder stores it: where it runs, and whose it is. */
export interface ProxiedApp {
  owner: string;
  workspace: string;
  /** The app's agent, by the name the dashboard links it with. */
  agentName: string;
  slug: string;
  /** The coder_app's url, e.g. http://localhost:3284/. */
  url: string;
}

export interface AppAddress {
  owner: string;
  workspace: string;
  /** As written in the URL (name or ID); empty when the URL names none. */
  agent: string;
  slug: string;
}

export type Route =
  | { kind: "path"; app: AppAddress; rest: string }
  | { kind: "subdomain"; app: AppAddress; rest: string }
  | { kind: "none" };

// Path-based apps: chi routes /@{user}/{workspace_and_agent}/apps/{workspaceapp}/*
// and the same with "%40" for "@" (Server.Attach in proxy.go); "workspace.agent"
// splits at the first dot (Request.Normalize in request.go).
const PATH_APP = /^\/(?:@|%40)([^/]+)\/([^/]+)\/apps\/([^/]+)(\/.*)?$/;

/**
 * Which app a request is for. A host under the wildcard app host is a
 * subdomain app (SubdomainAppMW and parseHostname in proxy.go); every other
 * host falls through to the path-based routes, which coderd mounts whatever
 * the Host is.
 */
export function routeRequest(host: string, path: string, wildcardHost: string | null): Route {
  const hostname = host.replace(/:\d+$/, "").toLowerCase();
  if (wildcardHost) {
    const suffix = wildcardHost.replace(/^\*/, "").toLowerCase();
    if (hostname.endsWith(suffix) && hostname.length > suffix.length) {
      const app = parseSubdomainApp(hostname.slice(0, -suffix.length));
      return app ? { kind: "subdomain", app, rest: path } : { kind: "none" };
    }
  }
  const [pathname, query = ""] = splitQuery(path);
  const match = PATH_APP.exec(pathname);
  if (!match) return { kind: "none" };
  const [, owner = "", workspaceAndAgent = "", slug = "", rest = ""] = match;
  const dot = workspaceAndAgent.indexOf(".");
  const workspace = dot < 0 ? workspaceAndAgent : workspaceAndAgent.slice(0, dot);
  const agent = dot < 0 ? "" : workspaceAndAgent.slice(dot + 1);
  return { kind: "path", app: { owner, workspace, agent, slug }, rest: rest + query };
}

function splitQuery(path: string): [string, string] {
  const q = path.indexOf("?");
  return q < 0 ? [path, ""] : [path.slice(0, q), path.slice(q)];
}

/**
 * "[prefix---]slug--agent--workspace--user", or without the agent as newer
 * dashboards link it (ParseSubdomainAppURL in appurl/appurl.go).
 */
export function parseSubdomainApp(subdomain: string): AppAddress | null {
  const name = subdomain.includes("---") ? subdomain.slice(subdomain.lastIndexOf("---") + 3) : subdomain;
  const parts = name.split("--");
  if (parts.length === 3) {
    const [slug = "", workspace = "", owner = ""] = parts;
    return { slug, workspace, owner, agent: "" };
  }
  if (parts.length === 4) {
    const [slug = "", agent = "", workspace = "", owner = ""] = parts;
    return { slug, agent, workspace, owner };
  }
  return null;
}

/**
 * The app a URL names. A slug is looked up among the workspace's apps and the
 * agent comes from the app, so the agent written in the URL plays no part
 * (Request.getDatabase in request.go).
 */
export function findApp(apps: ProxiedApp[], address: AppAddress): ProxiedApp | null {
  return (
    apps.find(
      (app) => app.owner === address.owner && app.workspace === address.workspace && app.slug === address.slug,
    ) ?? null
  );
}

// ModifyResponse in proxyWorkspaceApp (proxy.go): the app's CORS answer never
// reaches the browser, and Vary loses the values that belong to it.
const CORS_HEADERS = [
  "access-control-allow-origin",
  "access-control-allow-credentials",
  "access-control-allow-methods",
  "access-control-allow-headers",
];
const CORS_VARY = ["origin", "access-control-request-method", "access-control-request-headers"];

// Go's httputil.ReverseProxy drops these hop-by-hop headers both ways; the
// proxy-* ones are what a browser adds when it talks to an HTTP proxy.
const HOP_BY_HOP = [
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/** The app's response headers as Coder passes them on. */
export function responseHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || CORS_HEADERS.includes(name) || HOP_BY_HOP.includes(name)) continue;
    if (name === "vary") {
      const kept = String(value)
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "" && !CORS_VARY.includes(v.toLowerCase()));
      if (kept.length > 0) out.vary = kept.join(", ");
      continue;
    }
    out[name] = value;
  }
  return out;
}

/**
 * The request headers the app gets. Host stays the browser's: the director of
 * httputil.NewSingleHostReverseProxy (ServerTailnet.ReverseProxy in
 * coderd/tailnet.go) rewrites the URL, never the Host header.
 * X-Forwarded-For gets the client (httpmw.EnsureXForwardedForHeader, called by
 * proxyWorkspaceApp).
 */
export function requestHeaders(headers: IncomingHttpHeaders, clientIp: string): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.includes(name)) out[name] = value;
  }
  const forwarded = headers["x-forwarded-for"];
  out["x-forwarded-for"] = forwarded ? `${forwarded}, ${clientIp}` : clientIp;
  return out;
}

export interface AppProxyOptions {
  /** The deployment's access URL, http:// (the browser reaches it through this proxy). */
  accessUrl: string;
  /** The wildcard app host, e.g. "*.apps.example.test"; none means no subdomain apps. */
  wildcardHost?: string;
}

export class AppProxy {
  readonly apps: ProxiedApp[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly accessUrl: URL,
    readonly wildcardHost: string | null,
  ) {}

  static async start(opts: AppProxyOptions): Promise<AppProxy> {
    const accessUrl = new URL(opts.accessUrl);
    if (accessUrl.protocol !== "http:")
      throw new Error(`the app proxy stand-in speaks http only, not ${opts.accessUrl}`);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const proxy = new AppProxy(server, (server.address() as AddressInfo).port, accessUrl, opts.wildcardHost ?? null);
    server.on("request", (req, res) => proxy.handle(req, res));
    server.on("connection", (socket) => {
      proxy.sockets.add(socket);
      socket.on("close", () => proxy.sockets.delete(socket));
    });
    return proxy;
  }

  /** What to give a browser as its HTTP proxy. */
  get proxyServer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The URL the dashboard links a path-based app under, naming the agent by name. */
  pathAppUrl(app: ProxiedApp, host = this.accessUrl.host): string {
    return `${this.accessUrl.protocol}//${host}/@${app.owner}/${app.workspace}.${app.agentName}/apps/${app.slug}/`;
  }

  /** A subdomain app's URL (appurl.ApplicationURL.String), with or without the agent's name. */
  subdomainAppUrl(app: ProxiedApp, withAgent = true): string {
    if (!this.wildcardHost) throw new Error("this app proxy has no wildcard app host");
    const name = [app.slug, ...(withAgent ? [app.agentName] : []), app.workspace, app.owner].join("--");
    return `${this.accessUrl.protocol}//${this.wildcardHost.replace("*", name)}/`;
  }

  private handle(req: IncomingMessage, res: import("node:http").ServerResponse): void {
    // A browser sends an HTTP proxy the absolute URL; Host names the same server.
    const target = new URL(req.url ?? "/", `http://${req.headers.host ?? this.accessUrl.host}`);
    const host = req.headers.host ?? target.host;
    const path = `${target.pathname}${target.search}`;
    const route = routeRequest(host, path, this.wildcardHost);
    const app = route.kind === "none" ? null : findApp(this.apps, route.app);
    if (route.kind === "none" || !app) {
      res.writeHead(404, { "content-type": "text/plain" }).end("Application Not Found\n");
      return;
    }
    if (route.rest === "" || route.rest.startsWith("?")) {
      // proxyWorkspaceApp: an app's root without its slash is redirected to it.
      res.writeHead(307, { location: `${target.pathname}/${target.search}` }).end();
      return;
    }
    const upstream = new URL(app.url);
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: route.rest,
        headers: requestHeaders(req.headers, req.socket.remoteAddress ?? "127.0.0.1"),
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, responseHeaders(answer.headers));
        // Flushed as it comes: /events is a stream of server-sent events.
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    forward.on("error", (err) => {
      // ServerTailnet.ReverseProxy's ErrorHandler renders a 502 page.
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`Bad Gateway\nFailed to proxy request to application: ${err.message}\n`);
    });
    req.pipe(forward);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

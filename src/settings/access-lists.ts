import { log, warn } from "../lib/log.js";
import type { AccessSettings } from "./config.js";

// Which Host and Origin headers AgentAPI accepts. AgentAPI (lib/httpapi/server.go,
// coder/agentapi, the same from v0.4.0 through v0.11.8 and v0.12.2) compares the
// Host header's name, without its port and ignoring case, with an exact list of
// names ("*" alone allows any), and answers anything else with 400 "Invalid host
// header". Its CORS list is exact scheme://host[:port] origins.
//
// What each way into AgentAPI sends as Host, from coder/coder:
// - the Coder agent's app healthcheck (agent/apphealth.go) and the Tasks API
//   (authAndDoWithTaskAppClient in coderd/aitasks.go) request the coder_app URL,
//   http://localhost:<port>/, so Host is localhost:<port>;
// - `coder port-forward` (listenAndPortForward in cli/portforward.go) copies the
//   bytes to 127.0.0.1:<port> in the workspace: Host is whatever the local client
//   wrote, localhost or 127.0.0.1 with the local port;
// - the dashboard's app proxy (proxyWorkspaceApp in coderd/workspaceapps/proxy.go)
//   uses httputil.NewSingleHostReverseProxy (ServerTailnet.ReverseProxy in
//   coderd/tailnet.go), which never rewrites Host: a path-based app gets the
//   Host the browser used, the access URL's host (the template's
//   data.coder_workspace.me.access_url is the provisioner's CODER_AGENT_URL,
//   provisioner/terraform/provision.go); a subdomain app gets its own name,
//   <slug>[--<agent>]--<workspace>--<owner> in the wildcard app host (appurl.go
//   in coderd/workspaceapps/appurl; newer Coder links omit the agent,
//   AppSubdomain in coderd/database/db2sdk/db2sdk.go).
// The Coder agent gives every script VSCODE_PROXY_URI, the wildcard app host
// with "{{port}}" for the slug and this agent's, workspace's and owner's names
// filled in (vscodeProxyURI in coderd/agentapi/manifest.go; updateCommandEnv in
// agent/agent.go), set only when the deployment has a wildcard app host.
//
// The origin list only decides which pages get CORS approval: AgentAPI's CORS
// middleware (github.com/go-chi/cors v1.2.1, Handler) adds or withholds the
// Access-Control-* headers and passes every request on, so it never refuses
// one. The dashboard's app is same-origin (a path-based app is served from the
// access URL itself, a subdomain app from its own host), and a browser needs
// no CORS approval for that; Coder's proxy also removes AgentAPI's
// Access-Control-* headers (ModifyResponse in proxyWorkspaceApp). So the list
// matters only to a browser that talks to the port directly, through
// `coder port-forward` or Coder Desktop, and there the access URL's origin
// would approve every page the dashboard's origin serves, other users'
// path-based apps included. The default is loopback only.

const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];
const ANY = "*";
const PROXY_URI_SLOT = "{{port}}";

export interface AccessInput {
  port: number;
  /** data.coder_workspace.me.access_url. */
  accessUrl: string;
  subdomain: boolean;
  appSlug: string;
  /** VSCODE_PROXY_URI from the Coder agent, if any. */
  proxyUri: string | undefined;
  /** CODER_WORKSPACE_AGENT_NAME from the Coder agent, if any. */
  agentName: string | undefined;
  extraHosts: string[];
  extraOrigins: string[];
}

export interface AccessLists {
  hosts: string[];
  origins: string[];
  warnings: string[];
}

function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** Case-insensitive, first spelling kept; a list holding "*" is just "*". */
function finish(names: string[]): string[] {
  if (names.includes(ANY)) return [ANY];
  const seen = new Set<string>();
  return names.filter((name) => {
    const key = name.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The subdomain app's host names, with and without the agent's name, or [] when the proxy URI does not name one. */
function subdomainHosts(proxyUri: string | undefined, slug: string, agentName: string | undefined): string[] {
  if (!proxyUri?.includes(PROXY_URI_SLOT)) return [];
  const host = parsedUrl(proxyUri.replace(PROXY_URI_SLOT, slug))?.hostname;
  if (!host?.startsWith(`${slug}--`)) return [];
  const withAgent = agentName ? `${slug}--${agentName.toLowerCase()}--` : null;
  return withAgent && host.startsWith(withAgent) ? [host, `${slug}--${host.slice(withAgent.length)}`] : [host];
}

export function buildAccessLists(input: AccessInput): AccessLists {
  const warnings: string[] = [];
  const access = parsedUrl(input.accessUrl);
  if (!access)
    warnings.push(
      `the deployment's access URL ${JSON.stringify(input.accessUrl)} is not a URL, so only loopback and agentapi_allowed_hosts can reach AgentAPI`,
    );

  const appHosts: string[] = [];
  if (!input.subdomain && access) appHosts.push(access.hostname);
  if (input.subdomain) {
    appHosts.push(...subdomainHosts(input.proxyUri, input.appSlug, input.agentName));
    if (appHosts.length === 0 && input.extraHosts.length === 0)
      warnings.push(
        "subdomain = true, but the Coder agent gave no wildcard app URL (VSCODE_PROXY_URI), so the app's host name is unknown and Coder's proxy will get 400 \"Invalid host header\"; configure a wildcard access URL on the deployment, set subdomain = false, or add the app's host name to agentapi_allowed_hosts",
      );
  }
  const hosts = finish([...LOOPBACK_HOSTS, ...appHosts, ...input.extraHosts]);

  const loopbackOrigins = LOOPBACK_HOSTS.map((host) => `http://${host}:${input.port}`);
  const origins = finish([...loopbackOrigins, ...input.extraOrigins]);

  if (hosts[0] === ANY)
    warnings.push(
      'agentapi_allowed_hosts contains "*": AgentAPI accepts any Host, so a web page that points its own name at this workspace (DNS rebinding) can drive Goose',
    );
  if (origins[0] === ANY)
    warnings.push(
      'agentapi_allowed_origins contains "*": any web page open in a browser that reaches the port can read the chat',
    );
  return { hosts, origins, warnings };
}

/** The lists for this start, said in the log with any warning. */
export function decideAccess(
  settings: AccessSettings,
  agentapi: { port: number; appSlug: string },
  env: NodeJS.ProcessEnv,
): AccessLists {
  const lists = buildAccessLists({
    port: agentapi.port,
    accessUrl: settings.accessUrl,
    subdomain: settings.subdomain,
    appSlug: agentapi.appSlug,
    proxyUri: env.VSCODE_PROXY_URI,
    agentName: env.CODER_WORKSPACE_AGENT_NAME,
    extraHosts: settings.allowedHosts,
    extraOrigins: settings.allowedOrigins,
  });
  log(`AgentAPI accepts the Host names ${lists.hosts.join(", ")} and the origins ${lists.origins.join(", ")}`);
  for (const warning of lists.warnings) warn(warning);
  return lists;
}

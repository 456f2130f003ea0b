// A stand-in for Coder's AI Gateway (AI Bridge): the model stub served under
// the gateway's routes, open only to the workspace owner's session token.
// Routes and authentication as Coder documents them for clients
// (docs/ai-coder/ai-bridge/clients/index.md in coder/coder): OpenAI clients
// use <access URL>/api/v2/aibridge/openai/v1 with the token as their API key
// (a bearer token), Anthropic clients <access URL>/api/v2/aibridge/anthropic
// with it as ANTHROPIC_API_KEY (the x-api-key header). A request without the
// current token gets 401 and the API's JSON error body.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type ModelStub, startModelStub } from "../model-stub/server.js";

const ROUTES: Array<{ provider: "openai" | "anthropic"; prefix: string }> = [
  { provider: "openai", prefix: "/api/v2/aibridge/openai" },
  { provider: "anthropic", prefix: "/api/v2/aibridge/anthropic" },
];

/** One request the gateway saw. The token is never kept: only whether it was the current one. */
export interface GatewayRequest {
  provider: "openai" | "anthropic" | null;
  method: string;
  /** The path under the provider's route (what reaches the model), or the whole path when no route matched. */
  path: string;
  auth: "accepted" | "wrong-token" | "no-token";
  /** Which token was current when it was accepted (the label given to setToken). */
  tokenLabel: string | null;
}

export interface AiGatewayStandIn {
  /** The deployment's access URL (http://127.0.0.1:PORT): what Coder gives templates as access_url. */
  url: string;
  stub: ModelStub;
  requests(): GatewayRequest[];
  /** The token it accepts from now on; a new build's token revokes the last one. */
  setToken(token: string, label: string): void;
  close(): Promise<void>;
}

/** The token a client presented: a bearer token, or the x-api-key header. */
function presentedToken(req: IncomingMessage): string | null {
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (bearer) return (bearer[1] as string).trim();
  const key = req.headers["x-api-key"];
  return typeof key === "string" && key !== "" ? key : null;
}

function refuse(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { type: "authentication_error", message } });
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

export async function startAiGateway(opts: {
  token: string;
  label: string;
  model?: string;
}): Promise<AiGatewayStandIn> {
  const stub = await startModelStub({ model: opts.model });
  let current = { token: opts.token, label: opts.label };
  const seen: GatewayRequest[] = [];

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://gateway.local");
    const route = ROUTES.find((r) => url.pathname.startsWith(`${r.prefix}/`));
    const token = presentedToken(req);
    const auth = token === null ? "no-token" : token === current.token ? "accepted" : "wrong-token";
    const path = route ? url.pathname.slice(route.prefix.length) : url.pathname;
    seen.push({
      provider: route?.provider ?? null,
      method: req.method ?? "",
      path,
      auth,
      tokenLabel: auth === "accepted" ? current.label : null,
    });
    if (!route) return refuse(res, 404, `no AI Gateway route ${url.pathname}`);
    if (auth !== "accepted")
      return refuse(res, 401, auth === "no-token" ? "Authentication required." : "Invalid session token.");
    // The model answers as the provider would; the stub serves both APIs.
    // Hop-by-hop headers stay here (RFC 9110, 7.6.1), and each request gets
    // its own connection.
    const headers = { ...req.headers };
    for (const name of ["connection", "keep-alive", "host", "transfer-encoding", "proxy-connection"])
      delete headers[name];
    const upstream = httpRequest(
      { host: "127.0.0.1", port: stub.port, method: req.method, path: `${path}${url.search}`, headers, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => refuse(res, 502, "the model stand-in is gone"));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    stub,
    requests: () => [...seen],
    setToken(token, label) {
      current = { token, label };
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await stub.close();
    },
  };
}

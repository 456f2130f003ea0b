// A stand-in for a workspace's egress proxy, on loopback: it forwards plain
// http requests sent to it with an absolute URI (RFC 9112, 3.2.2) and opens
// CONNECT tunnels (RFC 9110, 9.3.6), and records what it was asked for:
// "GET http://127.0.0.1:4321/x", "CONNECT localhost:4322". `hosts` stands in
// for the DNS the proxy's side sees: a name there is reached at its address,
// so a test can play a remote release host on loopback.
import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

export class EgressProxy {
  readonly seen: string[] = [];
  private readonly tunnels = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** With `connectStatus`, every CONNECT is refused with that status (a proxy that forbids the host). */
  static async start(opts: { connectStatus?: number; hosts?: Record<string, string> } = {}): Promise<EgressProxy> {
    const hosts = opts.hosts ?? {};
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const proxy = new EgressProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("request", (req, res) => {
      proxy.seen.push(`${req.method} ${req.url}`);
      const target = new URL(req.url ?? "");
      target.hostname = hosts[target.hostname] ?? target.hostname;
      const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    server.on("connect", (req, client: Socket) => {
      proxy.seen.push(`CONNECT ${req.url}`);
      if (opts.connectStatus !== undefined) return void client.end(`HTTP/1.1 ${opts.connectStatus} Refused\r\n\r\n`);
      const { hostname, port } = new URL(`http://${req.url}`);
      const address = hosts[hostname] ?? hostname.replace(/^\[(.*)\]$/, "$1");
      const target = connect(Number(port), address, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        target.pipe(client);
        client.pipe(target);
      });
      for (const socket of [client, target]) {
        proxy.tunnels.add(socket);
        socket.on("error", () => undefined);
        socket.on("close", () => {
          proxy.tunnels.delete(socket);
          client.destroy();
          target.destroy();
        });
      }
    });
    return proxy;
  }

  close(): Promise<void> {
    for (const socket of this.tunnels) socket.destroy();
    this.server.closeAllConnections?.();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

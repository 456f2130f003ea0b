// A stand-in for the release servers the start script downloads from
// (github.com for AgentAPI and Goose): serves files on loopback, over http or,
// with a throwaway certificate, https, and records every request. Also makes
// the files it serves: a Goose release tarball packed the way upstream packs it.
import { createHash } from "node:crypto";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { run } from "./exec.js";
import { scratchDir } from "./repo.js";

export interface Certificate {
  key: Buffer;
  cert: Buffer;
  /** The certificate's file, for NODE_EXTRA_CA_CERTS. */
  certFile: string;
}

export function sha256(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A self-signed certificate for localhost and 127.0.0.1, made with openssl for this run only. */
export async function throwawayCertificate(): Promise<Certificate> {
  const dir = await scratchDir("cert");
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  const made = await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  if (made.code !== 0) throw new Error(`openssl req exited ${made.code}: ${made.stderr}`);
  return { key: await readFile(keyFile), cert: await readFile(certFile), certFile };
}

/**
 * `binary` as Goose's release tarball holds it: upstream runs
 * `tar -cjf goose-<target>.tar.bz2 -C goose-package .` with the binary alone
 * in goose-package (aaif-goose/goose .github/workflows/build-cli-linux.yml at v1.47.0).
 */
export async function gooseTarball(binary: string): Promise<Buffer> {
  const dir = await scratchDir("goose-package");
  const packageDir = path.join(dir, "goose-package");
  await mkdir(packageDir);
  await copyFile(binary, path.join(packageDir, "goose"));
  const archive = path.join(dir, "goose.tar.bz2");
  const packed = await run("tar", ["-cjf", archive, "-C", packageDir, "."]);
  if (packed.code !== 0) throw new Error(`tar exited ${packed.code}: ${packed.stderr}`);
  return readFile(archive);
}

export class ReleaseMirror {
  /** Every request's path, in order. */
  readonly requests: string[] = [];
  private readonly files = new Map<string, Buffer>();
  private readonly redirects = new Map<string, string>();
  private readonly dropping = new Set<string>();
  private hold?: { routes: [string, string]; boundMs: number; waiting: Array<() => void>; outcome?: "met" | "bound" };

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** Serves on 127.0.0.1; with a certificate, https:// as https://localhost:PORT. */
  static async start(cert?: Certificate): Promise<ReleaseMirror> {
    let mirror: ReleaseMirror | undefined;
    const handler = (req: IncomingMessage, res: ServerResponse) => mirror?.answer(req, res);
    const server = cert ? createHttpsServer({ key: cert.key, cert: cert.cert }, handler) : createHttpServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    mirror = new ReleaseMirror(server, cert ? `https://localhost:${port}` : `http://127.0.0.1:${port}`);
    return mirror;
  }

  serve(route: string, content: Buffer | string): void {
    this.files.set(route, Buffer.from(content));
  }

  /** Answers `route` with a 302 to `location`, as GitHub's release downloads do. */
  redirect(route: string, location: string): void {
    this.redirects.set(route, location);
  }

  /** Closes the connection of the next request for `route` without an answer: a transient failure a download retries. */
  dropNext(route: string): void {
    this.dropping.add(route);
  }

  /**
   * Answers a request for either route only once both have been asked for, so
   * a client that downloads the two one after the other waits for the first
   * answer in vain; after `boundMs` that answer goes out anyway.
   * `together()` says which happened.
   */
  holdTogether(routes: [string, string], boundMs: number): void {
    this.hold = { routes, boundMs, waiting: [] };
  }

  /** "met": both routes were asked for before either was answered; "bound": the bound ran out first. */
  together(): "met" | "bound" | undefined {
    return this.hold?.outcome;
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const route = req.url ?? "";
    this.requests.push(route);
    const hold = this.hold;
    if (hold !== undefined && hold.outcome === undefined && hold.routes.includes(route)) {
      const release = (outcome: "met" | "bound") => {
        hold.outcome = outcome;
        for (const answerHeld of hold.waiting.splice(0)) answerHeld();
      };
      if (hold.routes.every((r) => this.requests.includes(r))) {
        release("met");
      } else {
        const timer = setTimeout(() => release("bound"), hold.boundMs);
        hold.waiting.push(() => {
          clearTimeout(timer);
          this.respond(route, req, res);
        });
        return;
      }
    }
    this.respond(route, req, res);
  }

  private respond(route: string, req: IncomingMessage, res: ServerResponse): void {
    if (this.dropping.delete(route)) return void req.socket.destroy();
    const location = this.redirects.get(route);
    if (location !== undefined) return void res.writeHead(302, { Location: location }).end();
    const file = this.files.get(route);
    if (file === undefined) return void res.writeHead(404).end("not found");
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": file.length }).end(file);
  }

  close(): Promise<void> {
    this.server.closeAllConnections?.();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// What the download tests share (downloads.test.ts, start-install.test.ts):
// release mirrors on loopback closed after each test, upstream's asset names,
// the module's install variables pointed at a mirror, and marker binaries
// that show whether anything ran them.

import { execFileSync } from "node:child_process";
import { lstat } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach } from "vitest";
import {
  type Certificate,
  EgressProxy,
  gooseUnderTest,
  ReleaseMirror,
  scratchDir,
  tools,
} from "../../support/workspace/index.js";

// Release asset names as upstream publishes them (coder/agentapi
// .github/workflows/release.yml; aaif-goose/goose build-cli-linux.yml at v1.47.0).
export const ARCH = process.arch === "arm64" ? "arm64" : "amd64";
export const OTHER_ARCH = ARCH === "arm64" ? "amd64" : "arm64";
// The release the mirrored tarball claims to be: the double's, or what a real
// Goose (GOOSE_BIN) says it is, since the module checks `goose --version`
// against goose_version before it reuses an installed binary.
const underTest = gooseUnderTest();
export const GOOSE_VERSION = underTest.real
  ? (execFileSync(underTest.bin, ["--version"], { encoding: "utf8" }).trim().split(/\s+/).pop() ?? "").replace(/^v/, "")
  : "1.47.0";
export const agentapiRoute = (version = tools.agentapiNewVersion) => `/v${version}/agentapi-linux-${ARCH}`;
export const gooseRoute = (version = GOOSE_VERSION) =>
  `/v${version}/goose-${ARCH === "arm64" ? "aarch64" : "x86_64"}-unknown-linux-gnu.tar.bz2`;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
});

/** Closes `server` after the test. */
export async function closing<T extends { close(): Promise<void> }>(server: Promise<T>): Promise<T> {
  const value = await server;
  open.push(value);
  return value;
}

/** A release mirror serving `routes`, closed after the test. */
export async function mirrorServing(
  routes: Record<string, string | Buffer>,
  cert?: Certificate,
): Promise<ReleaseMirror> {
  const mirror = await closing(ReleaseMirror.start(cert));
  for (const [route, body] of Object.entries(routes)) mirror.serve(route, body);
  return mirror;
}

/** The module's variables to download AgentAPI from `url`, pinned to `sha256` when given. */
export const agentapiFrom = (url: string, sha256?: string) => ({
  install_agentapi: true,
  agentapi_download_url: url,
  ...(sha256 === undefined ? {} : { agentapi_sha256: { [ARCH]: sha256 } }),
});

/** The module's variables to download Goose `version` from `url`, pinned to `sha256` when given. */
export const gooseFrom = (url: string, sha256?: string, version = GOOSE_VERSION) => ({
  install_goose: true,
  goose_version: version,
  goose_download_url: url,
  ...(sha256 === undefined ? {} : { goose_sha256: { [ARCH]: sha256 } }),
});

export async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/** A binary that leaves `marker` behind when anything runs it. */
export function markerBinary(marker: string, versionLine: string): string {
  return `#!/bin/sh\necho ran >> '${marker}'\necho '${versionLine}'\n`;
}

/** An egress proxy, closed after the test. */
export const proxy = (opts?: Parameters<typeof EgressProxy.start>[0]) => closing(EgressProxy.start(opts));

/** A fresh file path to download to. */
export const destination = async () => path.join(await scratchDir("download"), "agentapi.download");

/**
 * A server on loopback that streams `bytes` without a Content-Length, as a bad
 * mirror or a redirect target may; closed after the test.
 */
export async function unannounced(bytes: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { "Content-Type": "application/octet-stream" });
    res.end(Buffer.alloc(bytes, 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

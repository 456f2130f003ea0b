// The start coder_script's downloads, from a release mirror on loopback: each
// download is checked against the template's SHA-256 before anything runs or
// unpacks it, an unpinned one is installed with a warning, and every download
// follows the workspace's proxy variables. AgentAPI is the real binary, Goose
// the test double packed as Goose's release tarball.

import { lstat, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  EgressProxy,
  gooseTarball,
  ReleaseMirror,
  type RunResult,
  run,
  sha256,
  throwawayCertificate,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import { expectOk, newWorkspace, render, start, stop } from "./scenario.js";

// Release asset names as upstream publishes them (coder/agentapi
// .github/workflows/release.yml; aaif-goose/goose build-cli-linux.yml at v1.47.0).
const ARCH = process.arch === "arm64" ? "arm64" : "amd64";
const OTHER_ARCH = ARCH === "arm64" ? "amd64" : "arm64";
const GOOSE_TARGET = ARCH === "arm64" ? "aarch64-unknown-linux-gnu" : "x86_64-unknown-linux-gnu";
const GOOSE_VERSION = "1.47.0";
const agentapiRoute = () => `/v${tools.agentapiNewVersion}/agentapi-linux-${ARCH}`;
const GOOSE_ROUTE = `/v${GOOSE_VERSION}/goose-${GOOSE_TARGET}.tar.bz2`;
const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"];

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
});

async function started<T extends { close(): Promise<void> }>(server: Promise<T>): Promise<T> {
  const value = await server;
  open.push(value);
  return value;
}

/** Runs the start script with `pathDirs` as PATH: neither a goose nor an agentapi of the test's is found there unless named. */
function startWith(ws: Workspace, script: string, pathDirs: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return run("/bin/sh", ["-c", script], { cwd: ws.home, env: { ...ws.env(), PATH: pathDirs.join(":"), ...env } });
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/** A binary that leaves `marker` behind when anything runs it. */
function markerBinary(marker: string, versionLine: string): string {
  return `#!/bin/sh\necho ran >> '${marker}'\necho '${versionLine}'\n`;
}

describe("verified downloads", () => {
  it("refuses a tampered AgentAPI before anything runs it, naming the expected and actual digests", async () => {
    const ws = await newWorkspace();
    const marker = path.join(ws.home, "tampered-agentapi-ran");
    const tampered = markerBinary(marker, `agentapi version ${tools.agentapiNewVersion}`);
    const mirror = await started(ReleaseMirror.start());
    mirror.serve(agentapiRoute(), tampered);
    const genuine = sha256(await readFile(tools.agentapiNew));
    const rendered = await render(ws, {
      install_agentapi: true,
      agentapi_download_url: mirror.url,
      agentapi_sha256: { [ARCH]: genuine },
    });

    const result = await ws.runScript(rendered.start);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `agentapi v${tools.agentapiNewVersion} from ${mirror.url}${agentapiRoute()} has SHA-256 ${sha256(tampered)}, but agentapi_sha256["${ARCH}"] expects ${genuine}.`,
    );
    expect(mirror.requests).toEqual([agentapiRoute()]);
    expect(await exists(marker)).toBe(false);
    expect(await readdir(path.join(ws.moduleDir, "bin"))).toEqual([]);
  });

  it("refuses a tampered Goose tarball before it is unpacked or run", async () => {
    const ws = await newWorkspace();
    const marker = path.join(ws.home, "tampered-goose-ran");
    const fake = path.join(ws.home, "fake-goose");
    await writeFile(fake, markerBinary(marker, `goose ${GOOSE_VERSION}`), { mode: 0o755 });
    const tampered = await gooseTarball(fake);
    const genuine = sha256(await gooseTarball(ws.goose.bin));
    const mirror = await started(ReleaseMirror.start());
    mirror.serve(GOOSE_ROUTE, tampered);
    const rendered = await render(ws, {
      install_goose: true,
      goose_version: GOOSE_VERSION,
      goose_download_url: mirror.url,
      goose_sha256: { [ARCH]: genuine.toUpperCase() },
    });

    const result = await startWith(ws, rendered.start, [path.dirname(tools.agentapiNew), ...SYSTEM_PATH]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `goose ${GOOSE_VERSION} from ${mirror.url}${GOOSE_ROUTE} has SHA-256 ${sha256(tampered)}, but goose_sha256["${ARCH}"] expects ${genuine}.`,
    );
    expect(await exists(marker)).toBe(false);
    const localBin = path.join(ws.home, ".local", "bin");
    expect(await readdir(localBin).catch(() => [])).toEqual([]);
    expect((await readdir(path.join(ws.moduleDir, "bin"))).filter((name) => name.includes("goose"))).toEqual([]);
  });

  it("refuses before downloading when the checksum map leaves out this workspace's architecture", async () => {
    const ws = await newWorkspace();
    const mirror = await started(ReleaseMirror.start());
    const rendered = await render(ws, {
      install_agentapi: true,
      agentapi_download_url: mirror.url,
      agentapi_sha256: { [OTHER_ARCH]: "0".repeat(64) },
    });
    const result = await ws.runScript(rendered.start);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `agentapi_sha256 names ${OTHER_ARCH} but not ${ARCH}, this workspace's architecture, so its download cannot be verified.`,
    );
    expect(mirror.requests).toEqual([]);
  });

  it("installs unpinned downloads, and the start log says they are not verified and gives their digests", async () => {
    const ws = await newWorkspace();
    const agentapi = await readFile(tools.agentapiNew);
    const goose = await gooseTarball(ws.goose.bin);
    const mirror = await started(ReleaseMirror.start());
    mirror.serve(agentapiRoute(), agentapi);
    mirror.serve(GOOSE_ROUTE, goose);
    const rendered = await render(ws, {
      install_agentapi: true,
      agentapi_download_url: mirror.url,
      install_goose: true,
      goose_version: GOOSE_VERSION,
      goose_download_url: mirror.url,
    });

    const result = await startWith(ws, rendered.start, SYSTEM_PATH);
    expectOk(result, "start");
    expect(result.stdout).toContain(
      `warning: agentapi v${tools.agentapiNewVersion} from ${mirror.url}${agentapiRoute()} is NOT verified: no SHA-256 is pinned for it and agentapi_sha256 is empty. It has SHA-256 ${sha256(agentapi)};`,
    );
    expect(result.stdout).toContain(
      `warning: goose ${GOOSE_VERSION} from ${mirror.url}${GOOSE_ROUTE} is NOT verified: no SHA-256 is pinned for it and goose_sha256 is empty. It has SHA-256 ${sha256(goose)};`,
    );
    expect(result.stdout).toContain("downloads: agentapi NOT verified; goose NOT verified\n");
    // By digest: a real Goose is about 150 MB, past what a deep equality of two Buffers can walk.
    expect(sha256(await readFile(path.join(ws.home, ".local", "bin", "goose")))).toBe(
      sha256(await readFile(ws.goose.bin)),
    );
    await ws.waitStable();
  });
});

describe("a pin means the binary that runs is verified", () => {
  it("replaces a bin/agentapi of the pinned version whose SHA-256 does not match, without running it; the next start verifies and keeps it", async () => {
    const ws = await newWorkspace();
    const genuine = await readFile(tools.agentapiNew);
    const mirror = await started(ReleaseMirror.start());
    mirror.serve(agentapiRoute(), genuine);
    const marker = path.join(ws.home, "planted-agentapi-ran");
    const planted = markerBinary(marker, `agentapi version ${tools.agentapiNewVersion}`);
    const target = path.join(ws.moduleDir, "bin", "agentapi");
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await writeFile(target, planted, { mode: 0o755 });
    const rendered = await render(ws, {
      install_agentapi: true,
      agentapi_download_url: mirror.url,
      agentapi_sha256: { [ARCH]: sha256(genuine) },
    });

    const first = await start(ws, rendered);
    expect(first.stdout).toContain(
      `${target} has SHA-256 ${sha256(planted)}, not agentapi_sha256["${ARCH}"]; downloading the pinned AgentAPI again`,
    );
    expect(first.stdout).toContain("downloads: agentapi verified;");
    expect(await exists(marker)).toBe(false);
    expect(sha256(await readFile(target))).toBe(sha256(genuine));
    await ws.waitStable();
    await stop(ws, rendered);

    const second = await start(ws, rendered);
    expect(second.stdout).toContain(
      `agentapi v${tools.agentapiNewVersion} at ${target} verified: SHA-256 ${sha256(genuine)} matches agentapi_sha256["${ARCH}"]`,
    );
    expect(second.stdout).toContain("downloads: agentapi verified (already installed);");
    expect(mirror.requests).toEqual([agentapiRoute()]);
    await ws.waitStable();
  });

  it("never runs a goose of the pinned version found on PATH, installs the pinned one, and verifies that one at the next start", async () => {
    const ws = await newWorkspace();
    const imageBin = path.join(ws.home, "image-bin");
    const marker = path.join(ws.home, "image-goose-ran");
    await mkdir(imageBin);
    await writeFile(path.join(imageBin, "goose"), markerBinary(marker, `goose ${GOOSE_VERSION}`), { mode: 0o755 });
    const tarball = await gooseTarball(ws.goose.bin);
    const mirror = await started(ReleaseMirror.start());
    mirror.serve(GOOSE_ROUTE, tarball);
    const rendered = await render(ws, {
      install_goose: true,
      goose_version: GOOSE_VERSION,
      goose_download_url: mirror.url,
      goose_sha256: { [ARCH]: sha256(tarball) },
    });
    const pathDirs = [imageBin, path.dirname(tools.agentapiNew), ...SYSTEM_PATH];
    const installed = path.join(ws.home, ".local", "bin", "goose");

    const first = await startWith(ws, rendered.start, pathDirs);
    expectOk(first, "start");
    expect(first.stdout).toContain(
      `${imageBin}/goose is not the goose this module unpacked from a tarball matching goose_sha256["${ARCH}"], so it is not used; installing the pinned Goose`,
    );
    expect(first.stdout).toContain("; goose verified\n");
    expect(await exists(marker)).toBe(false);
    await ws.waitStable();
    await stop(ws, rendered);

    const second = await startWith(ws, rendered.start, pathDirs);
    expectOk(second, "start");
    expect(second.stdout).toContain(
      `goose ${GOOSE_VERSION} at ${installed} verified: SHA-256 ${sha256(await readFile(ws.goose.bin))}, as unpacked from the tarball that matched goose_sha256["${ARCH}"]`,
    );
    expect(second.stdout).toContain("; goose verified (already installed)\n");
    expect(mirror.requests).toEqual([GOOSE_ROUTE]);
    expect(await exists(marker)).toBe(false);
    await ws.waitStable();
  });
});

describe("credentials in a download URL", () => {
  it("are never shown: the log and the error say *** for the user name and password", async () => {
    const ws = await newWorkspace();
    const cert = await throwawayCertificate();
    const mirror = await started(ReleaseMirror.start(cert));
    const tampered = "#!/bin/sh\necho tampered\n";
    mirror.serve(agentapiRoute(), tampered);
    const authority = mirror.url.slice("https://".length);
    const genuine = sha256(await readFile(tools.agentapiNew));
    const rendered = await render(ws, {
      install_agentapi: true,
      agentapi_download_url: `https://mirror-user:s3cr3t-t0ken@${authority}`,
      agentapi_sha256: { [ARCH]: genuine },
    });
    ws.setEnv({ NODE_EXTRA_CA_CERTS: cert.certFile });

    const result = await ws.runScript(rendered.start);
    expect(result.code).not.toBe(0);
    const shown = `https://***@${authority}${agentapiRoute()}`;
    expect(result.stdout).toContain(`downloading agentapi v${tools.agentapiNewVersion} from ${shown}\n`);
    expect(result.stderr).toContain(
      `agentapi v${tools.agentapiNewVersion} from ${shown} has SHA-256 ${sha256(tampered)}, but agentapi_sha256["${ARCH}"] expects ${genuine}.`,
    );
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/s3cr3t|mirror-user/);
    expect(mirror.requests).toEqual([agentapiRoute()]);
  });
});

describe("downloads through the workspace's proxy", () => {
  it("downloads from an https mirror through a CONNECT tunnel of HTTPS_PROXY, and verifies both files", async () => {
    const ws = await newWorkspace();
    const cert = await throwawayCertificate();
    const agentapi = await readFile(tools.agentapiNew);
    const goose = await gooseTarball(ws.goose.bin);
    const mirror = await started(ReleaseMirror.start(cert));
    mirror.serve(agentapiRoute(), agentapi);
    mirror.serve(GOOSE_ROUTE, goose);
    const proxy = await started(EgressProxy.start());
    const rendered = await render(ws, {
      install_agentapi: true,
      agentapi_download_url: mirror.url,
      agentapi_sha256: { [ARCH]: sha256(agentapi) },
      install_goose: true,
      goose_version: GOOSE_VERSION,
      goose_download_url: mirror.url,
      goose_sha256: { [ARCH]: sha256(goose) },
    });

    const result = await startWith(ws, rendered.start, SYSTEM_PATH, {
      HTTPS_PROXY: proxy.url,
      NODE_EXTRA_CA_CERTS: cert.certFile,
    });
    expectOk(result, "start");
    const authority = mirror.url.slice("https://".length);
    expect(proxy.seen).toEqual([`CONNECT ${authority}`, `CONNECT ${authority}`]);
    expect(mirror.requests).toEqual([agentapiRoute(), GOOSE_ROUTE]);
    expect(result.stdout).toContain(`through the proxy ${proxy.url} (HTTPS_PROXY)`);
    expect(result.stdout).toContain("downloads: agentapi verified; goose verified\n");
    await ws.waitStable();
  });
});

describe("goose_installer_url", () => {
  it("runs the installer without CODER_AGENT_TOKEN or any other Coder variable, and says Goose is not verified", async () => {
    const ws = await newWorkspace();
    const envFile = path.join(ws.home, "installer-env.txt");
    const installer = [
      "#!/bin/bash",
      "set -eu",
      `env > '${envFile}'`,
      'mkdir -p "$GOOSE_BIN_DIR"',
      `cp '${ws.goose.bin}' "$GOOSE_BIN_DIR/goose"`,
      "",
    ].join("\n");
    const mirror = await started(ReleaseMirror.start());
    mirror.serve("/download_cli.sh", installer);
    ws.setEnv({
      CODER_AGENT_TOKEN: "agent-token-secret",
      CODER_AGENT_URL: "https://coder.example.com",
      ANTHROPIC_API_KEY: "sk-ant-secret",
      HTTPS_PROXY: "http://proxy.corp.example:3128",
      NO_PROXY: "127.0.0.1",
    });
    const rendered = await render(ws, {
      install_goose: true,
      goose_version: GOOSE_VERSION,
      goose_installer_url: `${mirror.url}/download_cli.sh`,
    });

    const result = await startWith(ws, rendered.start, [path.dirname(tools.agentapiNew), ...SYSTEM_PATH]);
    expectOk(result, "start");
    const seen = (await readFile(envFile, "utf8")).split("\n");
    expect(seen.filter((line) => line.startsWith("CODER"))).toEqual([]);
    expect(seen.filter((line) => line.includes("secret"))).toEqual([]);
    expect(seen).toEqual(
      expect.arrayContaining([
        `GOOSE_VERSION=v${GOOSE_VERSION}`,
        "CONFIGURE=false",
        `GOOSE_BIN_DIR=${path.join(ws.home, ".local", "bin")}`,
        `HOME=${ws.home}`,
        "HTTPS_PROXY=http://proxy.corp.example:3128",
        "https_proxy=http://proxy.corp.example:3128",
        "NO_PROXY=127.0.0.1",
        "no_proxy=127.0.0.1",
      ]),
    );
    expect(result.stdout).toContain(`goose ${GOOSE_VERSION} is installed by ${mirror.url}/download_cli.sh`);
    expect(result.stdout).toContain(
      "downloads: agentapi none (install_agentapi = false); goose NOT verified (goose_installer_url)\n",
    );
    await ws.waitStable();
  });
});

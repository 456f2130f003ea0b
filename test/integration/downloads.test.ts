// The start coder_script's downloads, from a release mirror on loopback: each
// download is checked against the template's SHA-256 before anything runs or
// unpacks it, an unpinned one is installed with a warning, and every download
// follows the workspace's proxy variables. AgentAPI is the real binary, Goose
// the test double packed as Goose's release tarball.

import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EgressProxy, gooseTarball, sha256, throwawayCertificate, tools } from "../../support/workspace/index.js";
import {
  ARCH,
  agentapiFrom,
  agentapiRoute,
  closing,
  exists,
  GOOSE_VERSION,
  gooseFrom,
  gooseRoute,
  markerBinary,
  mirrorServing,
  OTHER_ARCH,
} from "./downloads-scenario.js";
import {
  agentapiDir,
  expectFailed,
  expectOk,
  gaveUpWithoutRelaunch,
  newWorkspace,
  output,
  render,
  runWithPath,
  SYSTEM_PATH,
  start,
  stop,
  theAgentapi,
} from "./scenario.js";

const AGENTAPI_VERSION = () => tools.agentapiNewVersion;
const GOOSE_ROUTE = gooseRoute();
const LOCAL_BIN = [".local", "bin"];

describe("verified downloads", () => {
  it("refuses a tampered AgentAPI before anything runs it, naming the expected and actual digests", async () => {
    const ws = await newWorkspace();
    const marker = path.join(ws.home, "tampered-agentapi-ran");
    const tampered = markerBinary(marker, `agentapi version ${AGENTAPI_VERSION()}`);
    const mirror = await mirrorServing({ [agentapiRoute()]: tampered });
    const genuine = sha256(await readFile(tools.agentapiNew));
    const rendered = await render(ws, agentapiFrom(mirror.url, genuine));

    const result = await ws.runStart(rendered);
    expectFailed(result);
    expect(result.stderr).toContain(
      `agentapi v${AGENTAPI_VERSION()} from ${mirror.url}${agentapiRoute()} has SHA-256 ${sha256(tampered)}, but agentapi_sha256["${ARCH}"] expects ${genuine}.`,
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
    const mirror = await mirrorServing({ [GOOSE_ROUTE]: tampered });
    const rendered = await render(ws, gooseFrom(mirror.url, genuine.toUpperCase()));

    const result = await runWithPath(ws, rendered, [agentapiDir(), ...SYSTEM_PATH]);
    expectFailed(result);
    expect(result.stderr).toContain(
      `goose ${GOOSE_VERSION} from ${mirror.url}${GOOSE_ROUTE} has SHA-256 ${sha256(tampered)}, but goose_sha256["${ARCH}"] expects ${genuine}.`,
    );
    expect(await exists(marker)).toBe(false);
    expect(await readdir(path.join(ws.home, ...LOCAL_BIN)).catch(() => [])).toEqual([]);
    expect((await readdir(path.join(ws.moduleDir, "bin"))).filter((name) => name.includes("goose"))).toEqual([]);
  });

  it("refuses before downloading when the checksum map leaves out this workspace's architecture", async () => {
    const ws = await newWorkspace();
    const mirror = await mirrorServing({});
    const rendered = await render(ws, {
      ...agentapiFrom(mirror.url),
      agentapi_sha256: { [OTHER_ARCH]: "0".repeat(64) },
    });
    const result = await ws.runStart(rendered);
    expectFailed(result);
    expect(result.stderr).toContain(
      `agentapi_sha256 names ${OTHER_ARCH} but not ${ARCH}, this workspace's architecture, so its download cannot be verified.`,
    );
    expect(mirror.requests).toEqual([]);
  });

  it("installs unpinned downloads, and the start log says they are not verified and gives their digests", async () => {
    const ws = await newWorkspace();
    const agentapi = await readFile(tools.agentapiNew);
    const goose = await gooseTarball(ws.goose.bin);
    const mirror = await mirrorServing({ [agentapiRoute()]: agentapi, [GOOSE_ROUTE]: goose });
    const rendered = await render(ws, { ...agentapiFrom(mirror.url), ...gooseFrom(mirror.url) });

    const result = await runWithPath(ws, rendered, SYSTEM_PATH);
    expectOk(result, "start");
    const unverified = (what: string, variable: string, digest: string) =>
      `warning: ${what} is NOT verified: no SHA-256 is pinned for it and ${variable} is empty. It has SHA-256 ${digest};`;
    expect(result.stdout).toContain(
      unverified(
        `agentapi v${AGENTAPI_VERSION()} from ${mirror.url}${agentapiRoute()}`,
        "agentapi_sha256",
        sha256(agentapi),
      ),
    );
    expect(result.stdout).toContain(
      unverified(`goose ${GOOSE_VERSION} from ${mirror.url}${GOOSE_ROUTE}`, "goose_sha256", sha256(goose)),
    );
    expect(result.stdout).toContain("downloads: agentapi NOT verified; goose NOT verified\n");
    // By digest: a real Goose is about 150 MB, past what a deep equality of two Buffers can walk.
    expect(sha256(await readFile(path.join(ws.home, ...LOCAL_BIN, "goose")))).toBe(
      sha256(await readFile(ws.goose.bin)),
    );
    await ws.waitStable();
  });
});

describe("a pin means the binary that runs is verified", () => {
  it("replaces a bin/agentapi of the pinned version whose SHA-256 does not match, without running it; the next start verifies it", async () => {
    const ws = await newWorkspace();
    const genuine = await readFile(tools.agentapiNew);
    const mirror = await mirrorServing({ [agentapiRoute()]: genuine });
    const marker = path.join(ws.home, "planted-agentapi-ran");
    const planted = markerBinary(marker, `agentapi version ${AGENTAPI_VERSION()}`);
    const target = path.join(ws.moduleDir, "bin", "agentapi");
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await writeFile(target, planted, { mode: 0o755 });
    const rendered = await render(ws, agentapiFrom(mirror.url, sha256(genuine)));

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
      `agentapi v${AGENTAPI_VERSION()} at ${target} verified: SHA-256 ${sha256(genuine)} matches agentapi_sha256["${ARCH}"]`,
    );
    expect(second.stdout).toContain("downloads: agentapi verified (already installed);");
    expect(mirror.requests).toEqual([agentapiRoute()]);
    await ws.waitStable();
  });

  it("never runs a goose of the pinned version found on PATH, installs the pinned one, and verifies it next start", async () => {
    const ws = await newWorkspace();
    const imageBin = path.join(ws.home, "image-bin");
    const marker = path.join(ws.home, "image-goose-ran");
    await mkdir(imageBin);
    await writeFile(path.join(imageBin, "goose"), markerBinary(marker, `goose ${GOOSE_VERSION}`), { mode: 0o755 });
    const tarball = await gooseTarball(ws.goose.bin);
    const mirror = await mirrorServing({ [GOOSE_ROUTE]: tarball });
    const rendered = await render(ws, gooseFrom(mirror.url, sha256(tarball)));
    const pathDirs = [imageBin, agentapiDir(), ...SYSTEM_PATH];
    const installed = path.join(ws.home, ...LOCAL_BIN, "goose");

    const first = await runWithPath(ws, rendered, pathDirs);
    expectOk(first, "start");
    expect(first.stdout).toContain(
      `${imageBin}/goose is not the goose this module unpacked from a tarball matching goose_sha256["${ARCH}"], so it is not used; installing the pinned Goose`,
    );
    expect(first.stdout).toContain("; goose verified\n");
    expect(await exists(marker)).toBe(false);
    await ws.waitStable();
    await stop(ws, rendered);

    const second = await runWithPath(ws, rendered, pathDirs);
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

describe("a pin covers what runs, every time it runs", () => {
  it("a supervisor's restart never runs a bin/agentapi replaced after the start: it gives up and names the change", async () => {
    const ws = await newWorkspace();
    const genuine = await readFile(tools.agentapiNew);
    const mirror = await mirrorServing({ [agentapiRoute()]: genuine });
    const rendered = await render(ws, agentapiFrom(mirror.url, sha256(genuine)));
    await start(ws, rendered);
    await ws.waitStable();

    const marker = path.join(ws.home, "replaced-agentapi-ran");
    const target = path.join(ws.moduleDir, "bin", "agentapi");
    const replacement = markerBinary(marker, `agentapi version ${AGENTAPI_VERSION()}`);
    // Renamed into place: the running AgentAPI's file cannot be written.
    await writeFile(`${target}.new`, replacement, { mode: 0o755 });
    await rename(`${target}.new`, target);
    process.kill(await theAgentapi(ws), "SIGKILL");

    const reason = await gaveUpWithoutRelaunch(ws);
    expect(reason).toContain(
      `Check what changed, then restart the workspace: Goose was not relaunched, because files the start verified changed since: agentapi ${target} was SHA-256 ${sha256(genuine)} at the start, now SHA-256 ${sha256(replacement)}.`,
    );
    expect(await exists(marker)).toBe(false);
  });

  it("with agent_firewall, a goose forged together with goose-verified.json never runs: the start unpacks the kept, re-verified tarball again", async () => {
    const ws = await newWorkspace();
    const tarball = await gooseTarball(ws.goose.bin);
    const mirror = await mirrorServing({ [GOOSE_ROUTE]: tarball });
    // Any prefix that runs the command after it: the pin's handling is what is tested here.
    const rendered = await render(ws, {
      ...gooseFrom(mirror.url, sha256(tarball)),
      agent_firewall: { command: ["env"] },
    });
    const pathDirs = [agentapiDir(), ...SYSTEM_PATH];
    const installed = path.join(ws.home, ...LOCAL_BIN, "goose");
    expectOk(await runWithPath(ws, rendered, pathDirs), "start");
    await ws.waitStable();
    await stop(ws, rendered);

    // What a tool call can do between two starts: replace goose, and its record to match.
    const marker = path.join(ws.home, "forged-goose-ran");
    const forged = markerBinary(marker, `goose ${GOOSE_VERSION}`);
    await writeFile(installed, forged, { mode: 0o755 });
    const record = { binary: installed, sha256: sha256(forged), tarball_sha256: sha256(tarball) };
    await writeFile(path.join(ws.moduleDir, "bin", "goose-verified.json"), `${JSON.stringify(record)}\n`);

    const second = await runWithPath(ws, rendered, pathDirs);
    expectOk(second, "start");
    const kept = path.join(ws.moduleDir, "bin", "goose-verified.tar.bz2");
    expect(second.stdout).toContain(
      `goose ${GOOSE_VERSION}: unpacking the tarball kept at ${kept} again; its SHA-256 ${sha256(tarball)} matches goose_sha256["${ARCH}"]`,
    );
    expect(await exists(marker)).toBe(false);
    expect(sha256(await readFile(installed))).toBe(sha256(await readFile(ws.goose.bin)));
    expect(mirror.requests).toEqual([GOOSE_ROUTE]);
    await ws.waitStable();
    await stop(ws, rendered);
  });
});

describe("credentials in a download URL", () => {
  it("are never shown: the log and the error say *** for the user name and password", async () => {
    const ws = await newWorkspace();
    const cert = await throwawayCertificate();
    const tampered = "#!/bin/sh\necho tampered\n";
    const mirror = await mirrorServing({ [agentapiRoute()]: tampered }, cert);
    const authority = mirror.url.slice("https://".length);
    const genuine = sha256(await readFile(tools.agentapiNew));
    const rendered = await render(ws, agentapiFrom(`https://mirror-user:s3cr3t-t0ken@${authority}`, genuine));
    ws.setEnv({ NODE_EXTRA_CA_CERTS: cert.certFile });

    const result = await ws.runStart(rendered);
    expectFailed(result);
    const shown = `https://***@${authority}${agentapiRoute()}`;
    expect(result.stdout).toContain(`downloading agentapi v${AGENTAPI_VERSION()} from ${shown}\n`);
    expect(result.stderr).toContain(
      `agentapi v${AGENTAPI_VERSION()} from ${shown} has SHA-256 ${sha256(tampered)}, but agentapi_sha256["${ARCH}"] expects ${genuine}.`,
    );
    expect(output(result)).not.toMatch(/s3cr3t|mirror-user/);
    expect(mirror.requests).toEqual([agentapiRoute()]);
  });
});

describe("downloads through the workspace's proxy", () => {
  it("downloads from an https mirror through a CONNECT tunnel of HTTPS_PROXY, retries through a new one, and verifies both files", async () => {
    const ws = await newWorkspace();
    const cert = await throwawayCertificate();
    const agentapi = await readFile(tools.agentapiNew);
    const goose = await gooseTarball(ws.goose.bin);
    const mirror = await mirrorServing({ [agentapiRoute()]: agentapi, [GOOSE_ROUTE]: goose }, cert);
    mirror.dropNext(GOOSE_ROUTE);
    const proxy = await closing(EgressProxy.start());
    const rendered = await render(ws, {
      ...agentapiFrom(mirror.url, sha256(agentapi)),
      ...gooseFrom(mirror.url, sha256(goose)),
    });

    const env = { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: cert.certFile };
    const result = await runWithPath(ws, rendered, SYSTEM_PATH, env);
    expectOk(result, "start");
    const authority = mirror.url.slice("https://".length);
    // A transient failure on a loaded machine is retried, and the log says so: every tunnel is accounted for,
    // every request the mirror saw came through one, and retried or not, each file was asked for in turn.
    const retries = result.stdout.split("; retrying (").length - 1;
    expect(proxy.seen).toEqual(Array.from({ length: 2 + retries }, () => `CONNECT ${authority}`));
    expect(mirror.requests.length).toBeLessThanOrEqual(proxy.seen.length);
    expect(mirror.requests.filter((route, i) => route !== mirror.requests[i - 1])).toEqual([
      agentapiRoute(),
      GOOSE_ROUTE,
    ]);
    expect(result.stdout).toContain(`through the proxy ${proxy.url} (HTTPS_PROXY)`);
    expect(result.stdout).toContain("downloads: agentapi verified; goose verified\n");
    await ws.waitStable();
  });
});

describe("goose_installer_url", () => {
  it("runs the installer without CODER_AGENT_TOKEN or any other Coder variable, and says Goose is not verified", async () => {
    const ws = await newWorkspace();
    const envFile = path.join(ws.home, "installer-env.txt");
    const installer = `#!/bin/bash\nset -eu\nenv > '${envFile}'\nmkdir -p "$GOOSE_BIN_DIR"\ncp '${ws.goose.bin}' "$GOOSE_BIN_DIR/goose"\n`;
    const mirror = await mirrorServing({ "/download_cli.sh": installer });
    const proxy = "http://proxy.corp.example:3128";
    ws.setEnv({
      CODER_AGENT_TOKEN: "agent-token-secret",
      CODER_AGENT_URL: "https://coder.example.com",
      ANTHROPIC_API_KEY: "sk-ant-secret",
      HTTPS_PROXY: proxy,
      NO_PROXY: "127.0.0.1",
    });
    const rendered = await render(ws, {
      install_goose: true,
      goose_version: GOOSE_VERSION,
      goose_installer_url: `${mirror.url}/download_cli.sh`,
    });

    const result = await runWithPath(ws, rendered, [agentapiDir(), ...SYSTEM_PATH]);
    expectOk(result, "start");
    const seen = (await readFile(envFile, "utf8")).split("\n");
    expect(seen.filter((line) => line.startsWith("CODER"))).toEqual([]);
    expect(seen.filter((line) => line.includes("secret"))).toEqual([]);
    expect(seen).toEqual(
      expect.arrayContaining([
        `GOOSE_VERSION=v${GOOSE_VERSION}`,
        "CONFIGURE=false",
        `GOOSE_BIN_DIR=${path.join(ws.home, ...LOCAL_BIN)}`,
        `HOME=${ws.home}`,
        ...[`HTTPS_PROXY=${proxy}`, `https_proxy=${proxy}`, "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"],
      ]),
    );
    expect(result.stdout).toContain(`goose ${GOOSE_VERSION} is installed by ${mirror.url}/download_cli.sh`);
    expect(result.stdout).toContain(
      "downloads: agentapi none (install_agentapi = false); goose NOT verified (goose_installer_url)\n",
    );
    await ws.waitStable();
  });
});

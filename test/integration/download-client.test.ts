// The install step's download client (src/install/download.ts) against real servers
// on loopback: a release mirror, over http and https, and an egress proxy
// that forwards plain requests and opens CONNECT tunnels.

import { lookup } from "node:dns/promises";
import { lstat, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { downloadFile } from "../../src/install/download.js";
import { type Certificate, scratchDir, sha256, throwawayCertificate } from "../../support/workspace/index.js";
import { destination, mirrorServing, proxy, unannounced } from "./downloads-scenario.js";

const ASSET = "/v0.12.2/agentapi-linux-amd64";
const CONTENT = Buffer.from("#!/bin/sh\necho 'agentapi version 0.12.2'\n");
const mirror = (cert?: Certificate) => mirrorServing({ [ASSET]: CONTENT }, cert);
const gone = (file: string) => expect(lstat(file)).rejects.toThrow(/ENOENT/);

describe("downloadFile", () => {
  it("writes the file 0600 and returns its SHA-256", async () => {
    const server = await mirror();
    const dest = await destination();
    const got = await downloadFile(`${server.url}${ASSET}`, dest, {});
    expect(got).toEqual({ sha256: sha256(CONTENT), bytes: CONTENT.length });
    expect(await readFile(dest)).toEqual(CONTENT);
    expect((await stat(dest)).mode & 0o777).toBe(0o600);
  });

  it("goes through HTTP_PROXY, which sees the request", async () => {
    const server = await mirror();
    const egress = await proxy();
    const got = await downloadFile(`${server.url}${ASSET}`, await destination(), { HTTP_PROXY: egress.url });
    expect(got.sha256).toBe(sha256(CONTENT));
    expect(egress.seen).toEqual([`GET ${server.url}${ASSET}`]);
    expect(server.requests).toEqual([ASSET]);
  });

  it.each([
    ["NO_PROXY", "127.0.0.1"],
    ["no_proxy", "example.com, 127.0.0.0/8"],
    ["NO_PROXY", "*"],
  ])("bypasses the proxy for a host %s=%j names", async (name, value) => {
    const server = await mirror();
    const egress = await proxy();
    const got = await downloadFile(`${server.url}${ASSET}`, await destination(), {
      http_proxy: egress.url,
      [name]: value,
    });
    expect(got.sha256).toBe(sha256(CONTENT));
    expect(egress.seen).toEqual([]);
    expect(server.requests).toEqual([ASSET]);
  });

  it("opens a CONNECT tunnel for https:// and checks the server's certificate end to end", async () => {
    // The certificate is not trusted by this process (no NODE_EXTRA_CA_CERTS),
    // so TLS must fail inside the tunnel; the start-script test in
    // downloads.test.ts trusts it and downloads through the same tunnel.
    const server = await mirror(await throwawayCertificate());
    const egress = await proxy();
    const dest = await destination();
    await expect(
      downloadFile(`${server.url}${ASSET}`, dest, { HTTPS_PROXY: egress.url }, { attempts: 1 }),
    ).rejects.toThrow(new RegExp(`self.signed certificate.*the proxy http://${egress.url.slice(7)} \\(HTTPS_PROXY\\)`));
    expect(egress.seen).toEqual([`CONNECT ${server.url.slice("https://".length)}`]);
    expect(server.requests).toEqual([]);
    await gone(dest);
  });

  it("names the proxy's answer when it refuses the tunnel", async () => {
    const server = await mirror(await throwawayCertificate());
    const egress = await proxy({ connectStatus: 403 });
    await expect(
      downloadFile(`${server.url}${ASSET}`, await destination(), { https_proxy: egress.url }, { attempts: 1 }),
    ).rejects.toThrow(/the proxy answered CONNECT localhost:\d+ with HTTP 403/);
  });

  it("follows a redirect to another loopback path, as GitHub's release links redirect", async () => {
    const server = await mirror();
    server.redirect("/latest", ASSET);
    const got = await downloadFile(`${server.url}/latest`, await destination(), {});
    expect(got.sha256).toBe(sha256(CONTENT));
    expect(server.requests).toEqual(["/latest", ASSET]);
  });

  it.each([
    ["http://mirror.example.com/agentapi", /a redirect to http:\/\/mirror\.example\.com is refused/],
    ["file:///etc/passwd", /a redirect to file:\/\/ is refused/],
  ])("refuses a redirect to %s at once, without retrying", async (location, message) => {
    const server = await mirror();
    server.redirect("/moved", location);
    await expect(downloadFile(`${server.url}/moved`, await destination(), {})).rejects.toThrow(message);
    expect(server.requests).toEqual(["/moved"]);
  });

  it("follows a redirect to a name on loopback from a loopback URL, connecting to the address it checked", async () => {
    const server = await mirror();
    const { port } = new URL(server.url);
    server.redirect("/latest", `http://localhost:${port}${ASSET}`);
    const got = await downloadFile(`${server.url}/latest`, await destination(), {});
    expect(got.sha256).toBe(sha256(CONTENT));
    expect(server.requests).toEqual(["/latest", ASSET]);
  });

  it("refuses a redirect from a remote URL to a name that resolves to this machine, before connecting to it", async () => {
    // This machine's own name, which resolves to one of its addresses
    // (loopback in /etc/hosts, a container's private address, systemd's
    // nss-myhostname); the remote release host is played through a proxy,
    // under a name that resolves nowhere here (RFC 6761 .invalid).
    const name = hostname().toLowerCase();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    expect(addresses, `${name}, this machine's host name, resolves`).not.toEqual([]);
    const server = await mirror();
    const { port } = new URL(server.url);
    const egress = await proxy({ hosts: { "releases.example.invalid": "127.0.0.1" } });
    server.redirect("/latest", `https://${name}:${port}${ASSET}`);
    const dest = await destination();
    const from = `http://releases.example.invalid:${port}/latest`;
    await expect(downloadFile(from, dest, { HTTP_PROXY: egress.url, NO_PROXY: name }, { attempts: 1 })).rejects.toThrow(
      `a redirect to https://${name}:${port} is refused: downloads from releases.example.invalid:${port} are never redirected to this machine or its private network (${name} resolves to `,
    );
    expect(egress.seen).toEqual([`GET ${from}`]);
    expect(server.requests).toEqual(["/latest"]);
    await gone(dest);
  });

  it("does not retry a 404", async () => {
    const server = await mirror();
    await expect(downloadFile(`${server.url}/missing`, await destination(), {})).rejects.toThrow(
      /downloading http:\/\/127\.0\.0\.1:\d+\/missing failed \(HTTP 404 from 127\.0\.0\.1:\d+\)/,
    );
    expect(server.requests).toEqual(["/missing"]);
  });

  it("reads a file:// mirror directly, whatever the proxy variables say", async () => {
    const dir = await scratchDir("file-mirror");
    await writeFile(path.join(dir, "agentapi"), CONTENT);
    const got = await downloadFile(`file://${dir}/agentapi`, await destination(), {
      http_proxy: "http://127.0.0.1:9",
      https_proxy: "http://127.0.0.1:9",
    });
    expect(got.sha256).toBe(sha256(CONTENT));
  });

  it("replaces a link planted at the destination instead of writing through it", async () => {
    const server = await mirror();
    const dest = await destination();
    const victim = path.join(path.dirname(dest), "victim");
    await writeFile(victim, "keep me");
    await symlink(victim, dest);
    await downloadFile(`${server.url}${ASSET}`, dest, {});
    expect(await readFile(victim, "utf8")).toBe("keep me");
    expect((await lstat(dest)).isFile()).toBe(true);
  });

  it("refuses a file larger than the cap its server announces, at once, without retrying, leaving no file", async () => {
    const server = await mirror();
    const dest = await destination();
    await expect(downloadFile(`${server.url}${ASSET}`, dest, {}, { maxBytes: CONTENT.length - 1 })).rejects.toThrow(
      /the download is larger than the .* MiB a download may take \(127\.0\.0\.1:\d+ announced \d+ bytes\)/,
    );
    expect(server.requests).toEqual([ASSET]);
    await gone(dest);
  });

  it("stops a download that outgrows the cap without announcing its size, leaving no partial file", async () => {
    const server = await unannounced(3 * 1024 * 1024);
    const dest = await destination();
    await expect(downloadFile(`${server.url}/goose.tar.bz2`, dest, {}, { maxBytes: 1024 * 1024 })).rejects.toThrow(
      /the download is larger than the 1 MiB a download may take \(more than 1048576 bytes arrived\)/,
    );
    expect(server.requests()).toBe(1);
    await gone(dest);
  });
});

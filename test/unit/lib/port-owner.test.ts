import { spawn } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, createServer, type Server } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  describePortHolder,
  listensOn,
  parseListeners,
  portBindable,
  portHolderIfTaken,
} from "../../../src/lib/port-owner.js";
import { liveChildren } from "../children.js";

const start = liveChildren();

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server of this process listening on a free port, on IPv4 loopback unless `host` says otherwise. */
async function listen(host = "127.0.0.1", port = 0): Promise<number> {
  const server = createServer();
  servers.push(server);
  server.listen({ port, host, ipv6Only: host.includes(":") });
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

async function closeLast(): Promise<void> {
  const server = servers.pop() as Server;
  await new Promise((resolve) => server.close(resolve));
}

describe("parseListeners", () => {
  const table = [
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
    "   0: 00000000:0CD4 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 41234 1 0000000000000000 100 0 0 10 0",
    "   1: 0100007F:0CD4 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 41299 1 0000000000000000 20 4 30 10 -1",
    "   2: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 50001 1 0000000000000000 100 0 0 10 0",
  ].join("\n");

  it("finds the listening socket on the port, not established connections or other ports", () => {
    expect(parseListeners(table, 3284)).toEqual([{ uid: 1000, inode: "41234" }]);
    expect(parseListeners(table, 8080)).toEqual([{ uid: 0, inode: "50001" }]);
    expect(parseListeners(table, 9999)).toEqual([]);
  });
});

describe("who holds a port", () => {
  it("sees this process listening, and names it", async () => {
    const port = await listen();
    expect(await listensOn(process.pid, port)).toBe(true);
    expect(await describePortHolder(port)).toMatch(new RegExp(`^PID ${process.pid} \\("[^"]+"\\)$`));
  });

  it("credits the listener's ancestors, not a process it does not descend from", async () => {
    const port = await listen();
    expect(await listensOn(process.ppid, port)).toBe(true);
    expect(await listensOn(await start("sleep", ["60"]), port)).toBe(false);
  });

  it("names the holder by PID and process name, never by its command line, which can hold a token", async () => {
    const secret = "token-4f1c2e9a";
    const holder = spawn(
      process.execPath,
      [
        "-e",
        "require('node:net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })",
        "--",
        `--token=${secret}`,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    try {
      const [line] = (await once(holder.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
      const port = Number(line.toString().trim());
      // The kernel names a process after the file it executed, cut to 15 bytes (proc(5), comm).
      const name = path.basename(process.execPath).slice(0, 15);
      expect(await describePortHolder(port)).toBe(`PID ${holder.pid} (${JSON.stringify(name)})`);
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it("finds nobody on a port after its server closed", async () => {
    const port = await listen();
    const server = servers.pop() as Server;
    await new Promise((resolve) => server.close(resolve));
    expect(await listensOn(process.pid, port)).toBe(false);
    expect(await describePortHolder(port)).toBeNull();
  });
});

describe("whether the port can be bound, before anyone is looked for", () => {
  it("cannot while a server listens on IPv4 loopback, which a server on every interface would collide with; can once it closed", async () => {
    const port = await listen();
    expect(await portBindable(port)).toBe(false);
    expect(await portHolderIfTaken(port)).toMatch(new RegExp(`^PID ${process.pid} \\("[^"]+"\\)$`));
    await closeLast();
    expect(await portBindable(port)).toBe(true);
    expect(await portHolderIfTaken(port)).toBeNull();
  });

  it("a bind refused for a moment (the install's or the start's own check beside it) names nobody: the port is bound again after a pause", async () => {
    const port = await listen();
    expect(await portHolderIfTaken(port, closeLast)).toBeNull();
  });

  it("cannot while a server listens on IPv6 loopback only", async () => {
    const port = await listen();
    await closeLast();
    await listen("::1", port);
    expect(await portBindable(port)).toBe(false);
    expect(await portHolderIfTaken(port)).toMatch(new RegExp(`^PID ${process.pid} \\(`));
  });
});

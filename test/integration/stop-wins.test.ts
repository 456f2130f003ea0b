// The lifecycle's concurrency, against real AgentAPI and the Goose under
// test: a stop that comes while a start is launching wins, whatever the
// clocks say; starts, supervisors and stops that meet at once are serialised
// by the module folder's lifecycle lock.

import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run, tools, type Workspace } from "../../support/workspace/index.js";
import {
  agentapiPids,
  cycle,
  expectOk,
  output,
  PROMPT,
  setup,
  start,
  startNew,
  stop,
  supervisors,
  waitNoProcesses,
  waitTurns,
} from "./scenario.js";

/**
 * A PATH folder whose `agentapi` waits, once it has been launched as a
 * server, until the test creates `release` in HOME, and only then becomes the
 * real AgentAPI (same PID): the moment between the start's launch and
 * AgentAPI writing its PID file, held open.
 */
async function agentapiHeldAtLaunch(ws: Workspace): Promise<{ binary: string; waiting: string; release: string }> {
  const [dir, waiting, release] = ["agentapi-held-at-launch", "agentapi-waiting", "release"].map((name) =>
    path.join(ws.home, name),
  ) as [string, string, string];
  await mkdir(dir);
  const binary = path.join(dir, "agentapi");
  const wait = `i=0; while [ ! -e '${release}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`;
  const script = `#!/bin/sh\nif [ "$1" = server ]; then\n  : > '${waiting}'\n  ${wait}\nfi\nexec '${tools.agentapiNew}' "$@"\n`;
  await writeFile(binary, script, { mode: 0o755 });
  return { binary, waiting, release };
}

/** The same script twice at once, under one agent. */
const twice = (ws: Workspace, script: string) => Promise.all([ws.runScript(script), ws.runScript(script)]);

describe("the stop wins", () => {
  it("a stop between the launch and AgentAPI's PID file: the start stops the AgentAPI it launched, and says so", async () => {
    const { ws, rendered } = await setup();
    const held = await agentapiHeldAtLaunch(ws);
    const starting = ws.runStart(rendered, held.binary);
    await ws.waitFor("the start to launch AgentAPI", async () => existsSync(held.waiting));

    // The stop finds no AgentAPI to signal yet: the launch has not written its PID file.
    const stopped = await ws.runScript(rendered.stop, held.binary);
    expectOk(stopped, "stop script");
    expect(stopped.stdout).toContain("nothing to signal");
    await writeFile(held.release, "");

    const started = await starting;
    expect(started.code, output(started)).not.toBe(0);
    expect(started.stdout).toContain("stop script ran while AgentAPI was starting; stopping it again so the stop wins");
    expect(started.stderr).toContain("the workspace's stop script ran while this start was still running");
    expect(started.stdout).not.toMatch(/phase supervisor/);
    await waitNoProcesses(ws);
    expect(await agentapiPids(ws)).toEqual([]);
    expect(await supervisors(ws)).toEqual([]);
  });

  it("a stop on a clock an hour ahead (a VM restored from a snapshot, an NTP step) holds back no later start", async () => {
    const { ws, rendered } = await startNew();
    await waitTurns(ws, 1);
    // The stop script's runtime sees a clock an hour ahead of the start's.
    const ahead = path.join(ws.home, "clock-ahead.mjs");
    await writeFile(ahead, "const now = Date.now;\nDate.now = () => now() + 3_600_000;\n");
    const skewed = await run("/bin/sh", ["-c", rendered.stop], {
      cwd: ws.home,
      env: { ...ws.env(), NODE_OPTIONS: `--import=${new URL(`file://${ahead}`).href}` },
    });
    expectOk(skewed, "stop script with its clock ahead");
    await waitNoProcesses(ws);

    const again = await start(ws, rendered);
    expect(again.stdout).not.toContain("is not launched");
    expect(await agentapiPids(ws)).toHaveLength(1);
    expect(await supervisors(ws)).toHaveLength(1);
    // ... and the supervisor it leaves restarts a crashed AgentAPI instead of standing down.
    const [crashed] = await agentapiPids(ws);
    process.kill(crashed as number, "SIGKILL");
    await ws.waitFor("a restarted AgentAPI", async () => {
      const now = await agentapiPids(ws);
      return now.length === 1 && now[0] !== crashed && (await ws.status()) !== null;
    });
    expect(await ws.deliveries(PROMPT)).toBe(1);
    await stop(ws, rendered);
  });
});

describe("one lifecycle lock", () => {
  it("two starts at once, meeting a stale supervisor.pid (a container restart): one AgentAPI, one supervisor", async () => {
    const { ws, rendered } = await setup();
    await cycle(ws, rendered);
    // $HOME persisted; the supervisor it names did not.
    await writeFile(path.join(ws.moduleDir, "supervisor.pid"), "999999999\n");

    // The install, then the start twice at once, under one agent.
    const outputs = [path.join(ws.home, "start-1.out"), path.join(ws.home, "start-2.out")];
    const agent =
      'sh -c "$1" || exit 9; sh -c "$2" >"$3" 2>&1 & a=$!; sh -c "$2" >"$4" 2>&1 & b=$!; wait "$a"; ca=$?; wait "$b"; echo "$ca $?"';
    const ran = await ws.runScript(agent, undefined, 120_000, ["sh", rendered.install, rendered.start, ...outputs]);
    const said = (await Promise.all(outputs.map((file) => readFile(file, "utf8").catch(() => "")))).join("\n----\n");
    expect(ran.stdout.trim().split("\n").pop(), `${output(ran)}\n${said}`).toBe("0 0");
    await ws.waitStable();
    expect(await agentapiPids(ws)).toHaveLength(1);
    const running = await supervisors(ws);
    expect(running).toHaveLength(1);
    expect(await ws.readModuleFile("supervisor.pid")).toBe(`${running[0]}\n`);
    await stop(ws, rendered);
    expect(await supervisors(ws)).toEqual([]);
  });

  it("two stops at once: one does the stop, the other waits for it and finds nothing left", async () => {
    const { ws, rendered } = await startNew();
    await waitTurns(ws, 1);
    const both = await twice(ws, rendered.stop);
    for (const result of both) expectOk(result, "stop script");
    const graceful = both.filter((r) => r.stdout.includes("Goose exited on /exit"));
    expect(graceful).toHaveLength(1);
    const other = both.find((r) => r !== graceful[0]) as (typeof both)[number];
    expect(other.stdout).toMatch(/nothing to signal/);
    expect(output(other)).not.toMatch(/SIGTERM|SIGKILL|warning/);
    await waitNoProcesses(ws);
    expect((await ws.readModuleFile("stop-count-2")) === "").toBe(true);
  });
});

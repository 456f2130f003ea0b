// The Coder agent starts every coder_script of a workspace at once; the start
// runs what the install left, so it waits for the install of its own agent
// run: through `coder exp sync` when the agent offers it, or through the
// install's state file when it does not (a Coder before v2.30, or an agent
// without CODER_AGENT_SOCKET_SERVER_ENABLED).

import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../support/workspace/index.js";
import { expectNoAgentapi, expectOk, newWorkspace, output, PLAIN, render, stop } from "./scenario.js";

// A slow install that notes, at its very end, whether AgentAPI already runs:
// it must not, since the start launches it only after the install.
const SLOW_POST_INSTALL = [
  "sleep 3",
  'if [ -e "$HOME/.coder-modules/coder/goose/agentapi.pid" ]; then order=after; else order=before; fi',
  'echo "$order" > "$HOME/install-ended"',
].join("\n");

describe("the start waits for the install of its own agent run", () => {
  it("without coder exp sync: through the install's state file", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { ...PLAIN, post_install_script: SLOW_POST_INSTALL });

    const started = await ws.runStart(rendered);
    expectOk(started, "start");
    expect(output(started)).toContain("waiting for the install script");
    expect((await readFile(path.join(ws.home, "install-ended"), "utf8")).trim()).toBe("before");
    // Each script's lines are kept under the module folder too, as coder-utils keeps them.
    const logs = path.join(ws.moduleDir, "logs");
    expect(await readFile(path.join(logs, "install.log"), "utf8")).toMatch(/goose-module: phase post-install: \d+ ms/);
    expect(await readFile(path.join(logs, "start.log"), "utf8")).toMatch(/goose-module: phase launch: \d+ ms/);
    await ws.waitStable();
    await stop(ws, rendered);
  });

  it("with coder exp sync: under coder-utils' names, the start after the install completes", async () => {
    const ws = await newWorkspace();
    const syncDir = await mkdtemp(path.join(os.tmpdir(), "coder-sync-"));
    ws.setEnv({ CODER_STANDIN_SYNC_DIR: syncDir });
    const rendered = await render(ws, { ...PLAIN, post_install_script: SLOW_POST_INSTALL });

    expectOk(await ws.runStart(rendered), "start");
    expect((await readFile(path.join(ws.home, "install-ended"), "utf8")).trim()).toBe("before");
    const calls = (await readFile(path.join(syncDir, "calls.log"), "utf8")).trim().split("\n");
    expect(calls.filter((call) => call !== "ping").sort()).toEqual(
      [
        "start coder-goose-install_script",
        "complete coder-goose-install_script",
        "want coder-goose-start_script coder-goose-install_script",
        "start coder-goose-start_script",
        "complete coder-goose-start_script",
      ].sort(),
    );
    await ws.waitStable();
    // The stop waits for nothing and announces nothing.
    await stop(ws, rendered);
    expect((await readFile(path.join(syncDir, "calls.log"), "utf8")).trim().split("\n")).toEqual(calls);
  });

  it("an install state left by an earlier agent run does not count", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { ...PLAIN, post_install_script: SLOW_POST_INSTALL });
    // What the last boot's install left: done, and fine, but another agent's run.
    await mkdir(ws.moduleDir, { recursive: true, mode: 0o700 });
    await writeFile(path.join(ws.moduleDir, "install.state"), "1.1 done 0\n");
    // The agent starts the start script first, and the install only once the
    // start is waiting.
    const gate = path.join(ws.home, "gate");
    expectOk(await run("mkfifo", [gate]), "mkfifo");
    const startLog = path.join(ws.home, "start.out");
    const agent = 'sh -c "$2" >"$4" 2>&1 & read go <"$3"; sh -c "$1"; wait';
    const booting = ws.runScript(agent, undefined, 120_000, ["sh", rendered.install, rendered.start, gate, startLog]);
    await ws.waitFor("the start waiting for the install", async () =>
      (await readFile(startLog, "utf8").catch(() => "")).includes("waiting for the install script"),
    );
    await writeFile(gate, "go\n");
    expectOk(await booting, "install and start");
    expect((await readFile(path.join(ws.home, "install-ended"), "utf8")).trim()).toBe("before");
    await ws.waitStable();
    await stop(ws, rendered);
  });

  it("a failed install: the start launches nothing and names the install's log", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { ...PLAIN, pre_install_script: "echo 'the mirror is down' >&2\nexit 3" });

    const started = await ws.runStart(rendered);
    expect(started.code).not.toBe(0);
    expect(started.stderr).toContain('see the "Goose: Install Script" log in the Coder dashboard');
    expect(started.stderr).toMatch(/the install script failed \(exit \d+\), so Goose is not started/);
    expect(await readFile(path.join(ws.moduleDir, "logs", "install.log"), "utf8")).toContain("the mirror is down");
    await expectNoAgentapi(ws);
  });
});

// The user's own workspace must not break the module, and the module must not
// change the user's workspace: a throwaway HOME shaped like a real one, the
// rendered coder_scripts run against real AgentAPI and the Goose under test.

import { existsSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { needsRoot } from "../../support/vitest/skips.js";
import { agentStartArgs, childPids, gooseSessionExtensions, run, umaskOf } from "../../support/workspace/index.js";
import {
  agentapiPids,
  cycle,
  expectFailed,
  expectNoAgentapi,
  expectOk,
  flat,
  launchRecord,
  newWorkspace,
  output,
  PLAIN,
  PROMPT,
  render,
  savedState,
  setup,
  start,
  stop,
  waitNoProcesses,
  waitTurns,
} from "./scenario.js";
import { agentLaunches } from "./start-scenario.js";

const mode = (file: string) => stat(file).then((s) => s.mode & 0o777);
const VICTIM = "the victim's own file\n";
const setAside = async (dir: string) =>
  (await readdir(dir)).filter((n) => n.startsWith("agentapi-state.json.set-aside-")).sort();

describe("the user's startup files never reach the module", () => {
  it("a chatty .bashrc, .profile and BASH_ENV: three cycles, one prompt delivery, then warm starts", async () => {
    const ws = await newWorkspace();
    await writeFile(path.join(ws.home, ".bashrc"), 'echo "hello from .bashrc"\necho "and to stderr" >&2\n');
    await writeFile(path.join(ws.home, ".profile"), 'echo "hello from .profile"\n');
    const bashEnv = path.join(ws.home, "bash-env.sh");
    await writeFile(bashEnv, 'echo "hello from BASH_ENV"\nexit 1\n');
    ws.setEnv({ BASH_ENV: bashEnv, ENV: bashEnv });
    const rendered = await render(ws);

    const modes: string[] = [];
    for (let cycle = 0; cycle < 3; cycle++) {
      await start(ws, rendered);
      const record = await launchRecord(ws);
      expect(record.persistence, record.persistence_reason).toBe(true);
      modes.push(record.mode);
      await waitTurns(ws, 1);
      await stop(ws, rendered);
    }
    expect(modes).toEqual(["cold", "warm", "warm"]);
    expect(await ws.deliveries(PROMPT)).toBe(1);
  });

  it("a .bashrc that execs another program neither hangs the start nor turns persistence off", async () => {
    const ws = await newWorkspace();
    await writeFile(path.join(ws.home, ".bashrc"), "exec sleep 600\n");
    ws.setEnv({ BASH_ENV: path.join(ws.home, ".bashrc") });
    const rendered = await render(ws);
    await start(ws, rendered);
    const record = await launchRecord(ws);
    expect(record.persistence, record.persistence_reason).toBe(true);
    expect(record.mode).toBe("cold");
    await waitTurns(ws, 1);
    await stop(ws, rendered);
  });
});

describe("a port someone else holds", () => {
  it("fails the start at once, naming port and holder, before any install step; Goose never runs", async () => {
    const ws = await newWorkspace();
    // Another agent's AgentAPI, as far as /status tells.
    const server = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ status: "stable", agent_type: "claude" }));
    });
    await new Promise<void>((resolve) => server.listen(ws.port, "127.0.0.1", resolve));
    try {
      const rendered = await render(ws, { pre_install_script: 'touch "$HOME/pre-install-ran"' });
      const result = await ws.runStart(rendered);
      expectFailed(result);
      expect(result.stderr).toContain(`port ${ws.port}`);
      expect(existsSync(path.join(ws.home, "pre-install-ran"))).toBe(false);
      expect(result.stderr).toContain(`PID ${process.pid}`);
      expect(result.stdout).not.toContain("Goose is ready");
      expect(await ws.deliveries(PROMPT)).toBe(0);
      await expectNoAgentapi(ws);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("the module's files are private, everything else keeps the workspace's umask", () => {
  it("umask 022: install scripts, AgentAPI and Goose run with it; module files are 0600 in 0700 folders", async () => {
    const { ws, rendered } = await setup({
      pre_install_script: 'umask > "$HOME/pre-install-umask"',
      post_install_script: 'umask > "$HOME/post-install-umask"\ntouch "$HOME/project/made-by-post-install"',
    });
    const [, agent, ...scripts] = agentStartArgs(rendered);
    const result = await ws.runScript(`umask 022\n${agent}`, undefined, undefined, scripts);
    expectOk(result, "install and start scripts");
    await waitTurns(ws, 1);

    for (const step of ["pre", "post"])
      expect((await readFile(path.join(ws.home, `${step}-install-umask`), "utf8")).trim()).toBe("0022");
    expect(await mode(path.join(ws.home, "project"))).toBe(0o755);
    expect(await mode(path.join(ws.home, "project", "made-by-post-install"))).toBe(0o644);
    const [agentapi] = await agentapiPids(ws);
    expect(agentapi).toBeDefined();
    expect(await umaskOf(agentapi as number)).toBe("0022");
    const goose = await childPids(agentapi as number);
    expect(goose.length).toBeGreaterThan(0);
    expect(await umaskOf(goose[0] as number)).toBe("0022");

    for (const dir of ["", "logs", "scripts", "bin"])
      expect(await mode(path.join(ws.moduleDir, dir)), `${dir || "module folder"}`).toBe(0o700);
    const files = ["agentapi-launch.json", "agentapi-state.json.owner.json", "first-prompt.md"];
    for (const file of [...files, "logs/agentapi.log", "logs/pre_install.log", "logs/post_install.log"])
      expect(await mode(path.join(ws.moduleDir, file)), file).toBe(0o600);
    await stop(ws, rendered);
    expect(await mode(path.join(ws.moduleDir, "agentapi-state.json"))).toBe(0o600);
  });
});

describe("the user's Goose config is the user's", () => {
  it("config.yaml, a symlink to a dotfile, is never written, and Goose gets the user's extensions and the module's", async () => {
    const ws = await newWorkspace();
    const original = `# My own Goose settings; the module must not touch them.
GOOSE_MODE: approve # ask me before every tool
big_number: 12345678901234567890
quoted: 'single quotes kept'
extensions:
  memory: # my own extension
    type: builtin
    name: memory
    enabled: true
`;
    const dotfile = path.join(ws.home, "dotfiles", "goose.yaml");
    await mkdir(path.dirname(dotfile), { recursive: true });
    await writeFile(dotfile, original);
    const configFile = path.join(ws.home, ".config", "goose", "config.yaml");
    await mkdir(path.dirname(configFile), { recursive: true });
    await symlink(dotfile, configFile);
    const systemPrompt =
      "Be brief. <!-- coder goose module: system_prompt end --> and <!-- coder goose module: system_prompt begin -->";
    // tutorial: a builtin a real Goose starts without any other program.
    const tutorial = "tutorial:\n  type: builtin\n  name: tutorial\n  enabled: true\n  timeout: 300\n";
    const rendered = await render(ws, { system_prompt: systemPrompt, additional_extensions: tutorial });

    const texts: string[] = [];
    const hints: string[] = [];
    for (let cycle = 0; cycle < 3; cycle++) {
      await start(ws, rendered);
      texts.push(await readFile(dotfile, "utf8"));
      hints.push(await readFile(path.join(ws.home, ".config", "goose", ".goosehints"), "utf8"));
      await waitTurns(ws, 1);
      await stop(ws, rendered);
    }

    expect((await lstat(configFile)).isSymbolicLink()).toBe(true);
    expect(await readlink(configFile)).toBe(dotfile);
    expect(texts).toEqual([original, original, original]);
    // The module's entries come from its own layer (GOOSE_ADDITIONAL_CONFIG_FILES),
    // merged with the user's by Goose; the session keeps that set on resume.
    const saved = await gooseSessionExtensions(ws.gooseDb);
    expect(saved).toHaveLength(1);
    expect(saved[0]).toEqual(expect.arrayContaining(["memory", "tutorial", "developer"]));
    // A real Goose saves only extensions that started, and no `coder` CLI runs here.
    if (!ws.goose.real) expect(saved[0]).toContain("Coder");

    expect(hints).toEqual([hints[0], hints[0], hints[0]]);
    expect(flat(hints[0]!)).toContain("Be brief.");

    if (!ws.goose.real) {
      // The settings the module needs reach its own Goose through the environment.
      const launched = agentLaunches(await ws.events());
      expect(launched.length).toBe(3);
      for (const e of launched) expect(e.env).toMatchObject({ GOOSE_MODE: "auto", GOOSE_TELEMETRY_ENABLED: "false" });
    }
  });
});

describe("the stop on a full disk", () => {
  it("still saves what it can, lets Goose exit by itself, and says the disk is full", async ({ skip }) => {
    skip(process.getuid?.() !== 0, needsRoot("mounting a small tmpfs as the workspace's HOME"));
    const ws = await newWorkspace();
    const mounted = await run("mount", ["-t", "tmpfs", "-o", "size=24m,mode=0755", "tmpfs", ws.home]);
    skip(mounted.code !== 0, `mount -t tmpfs failed: ${mounted.stderr.trim()}`);
    try {
      // The supervisor's autosave would have saved the chat before the disk
      // filled up; this is about the stop's own save meeting a full disk.
      const rendered = await render(ws, { supervise: false });
      await start(ws, rendered);
      await waitTurns(ws, 1);
      await ws.send("a message before the disk fills up");
      const filler = path.join(ws.home, "filler");
      const fill = await run("dd", ["if=/dev/zero", `of=${filler}`, "bs=1M", "count=64"]);
      expect(fill.stderr).toMatch(/No space left on device/);

      const result = await ws.runScript(rendered.stop, undefined, 60_000);
      console.log(output(result));
      expect(output(result)).toMatch(/disk holding .* is full/);
      expect(result.stdout).toContain("Goose exited on /exit");
      // The stop counted itself first all the same: a rename writes no data.
      expect(output(result)).not.toContain("could not count this stop");
      expect(await ws.readModuleFile("stop-count-1")).toBe("");
      await waitNoProcesses(ws);
      if (!ws.goose.real) {
        const exits = (await ws.events()).filter((e) => e.event === "exit");
        expect(exits.at(-1)?.code).toBe(0);
      }
    } finally {
      await ws.cleanup();
      await run("umount", ["-l", ws.home]);
    }
  });
});

describe("no write follows a symlink the module did not make", () => {
  it("refuses a state folder others can write to, naming it, before anything runs", async () => {
    const ws = await newWorkspace();
    const shared = path.join(ws.home, "shared");
    await mkdir(shared);
    await chmod(shared, 0o777);
    const victim = path.join(ws.home, "victim-bashrc");
    await writeFile(victim, VICTIM);
    await symlink(victim, path.join(shared, "chat.json.bak"));
    const rendered = await render(ws, { state_file_path: path.join(shared, "chat.json") });

    const result = await ws.runStart(rendered);
    expectFailed(result);
    expect(result.stderr).toContain(shared);
    expect(result.stderr).toMatch(/can be written by other users/);
    expect(await readFile(victim, "utf8")).toBe(VICTIM);
    await expectNoAgentapi(ws);
  });

  it("replaces a symlink found at the backup path instead of writing through it", async () => {
    const ws = await newWorkspace();
    const stateFile = path.join(ws.home, "chat", "chat.json");
    const rendered = await render(ws, { state_file_path: stateFile });
    await cycle(ws, rendered);

    const victim = path.join(ws.home, "victim-bashrc");
    await writeFile(victim, VICTIM);
    await symlink(victim, `${stateFile}.bak`);
    await start(ws, rendered);
    expect(await readFile(victim, "utf8")).toBe(VICTIM);
    expect((await lstat(`${stateFile}.bak`)).isFile()).toBe(true);
    expect(await readFile(`${stateFile}.bak`, "utf8")).toBe(await readFile(stateFile, "utf8"));
    await stop(ws, rendered);
  });
});

describe("smaller defects", () => {
  it("a state file AgentAPI would refuse is set aside at start, and this run's chat is kept at the stop", async () => {
    const { ws, rendered } = await setup();
    await cycle(ws, rendered);
    const stateFile = path.join(ws.moduleDir, "agentapi-state.json");
    const state = JSON.parse(await readFile(stateFile, "utf8"));
    state.messages[0].time = "yesterday";
    await writeFile(stateFile, JSON.stringify(state));

    const started = await start(ws, rendered);
    expect(output(started)).toMatch(/would refuse/);
    expect(await setAside(ws.moduleDir)).toHaveLength(1);
    await ws.send("a message after the bad file was set aside");
    await stop(ws, rendered);
    const saved = await savedState(ws);
    expect(flat(saved!.messages.map((m) => m.message).join(" "))).toContain(
      "a message after the bad file was set aside",
    );
  });

  it("switching session_name alpha → beta → alpha never shows beta's chat in alpha's dashboard", async () => {
    const ws = await newWorkspace();
    const alpha = await render(ws, { session_name: "alpha", ...PLAIN });
    const beta = await render(ws, { session_name: "beta", ...PLAIN });
    for (const [name, rendered] of [
      ["alpha", alpha],
      ["beta", beta],
    ] as const) {
      await start(ws, rendered);
      await ws.send(`a message for ${name}`);
      await stop(ws, rendered);
    }
    await start(ws, alpha);
    await ws.waitStable();
    const shown = flat((await ws.messages()).map((m) => m.content).join(" "));
    expect(shown).not.toContain("a message for beta");
    expect((await launchRecord(ws)).mode).toBe("warm");
    await stop(ws, alpha);
  });

  it("a stop that runs while the start is still installing wins: AgentAPI is never left running", async () => {
    const { ws, rendered } = await setup({
      // The scenario itself: an install step that is still running when the stop comes.
      pre_install_script: `i=0; while [ ! -e "$HOME/release-pre-install" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`,
    });
    const starting = ws.runStart(rendered);
    await ws.waitFor(
      "the start to reach pre_install",
      async () => (await ws.readModuleFile("logs/pre_install.log")) !== null,
    );
    expectOk(await ws.runScript(rendered.stop), "stop script");
    await writeFile(path.join(ws.home, "release-pre-install"), "");
    const started = await starting;
    // It says so, and does not report success: Goose is not running.
    expectFailed(started);
    expect(started.stdout).toContain("AgentAPI is not launched");
    expect(started.stderr).toContain("the workspace's stop script ran while this start was still running");
    await expectNoAgentapi(ws);
    expect(await ws.deliveries(PROMPT)).toBe(0);
  });

  it("two stop scripts at the same moment both finish and leave nothing running", async () => {
    const { ws, rendered } = await setup();
    await start(ws, rendered);
    await waitTurns(ws, 1);
    const [first, second] = await Promise.all([ws.runScript(rendered.stop), ws.runScript(rendered.stop)]);
    expectOk(first!, "first stop");
    expectOk(second!, "second stop");
    await waitNoProcesses(ws);
    expect((await savedState(ws))?.messages.length).toBeGreaterThan(0);
  });

  it("a directory at the state path: the start fails saying so, the stop says so and loses nothing", async () => {
    const ws = await newWorkspace();
    await mkdir(path.join(ws.moduleDir, "agentapi-state.json"), { recursive: true });
    const rendered = await render(ws);
    const started = await ws.runStart(rendered);
    expectFailed(started);
    expect(started.stderr).toMatch(/agentapi-state\.json is a folder/);
    await expectNoAgentapi(ws);
    const stopped = await ws.runScript(rendered.stop);
    expectOk(stopped, "stop script");
    expect(output(stopped)).toMatch(/agentapi-state\.json is a folder/);
    expect(output(stopped)).not.toContain("unexpected failure");
  });

  it("set-aside chats beyond the newest 5 are removed, the newest kept", async () => {
    const ws = await newWorkspace();
    await mkdir(ws.moduleDir, { recursive: true, mode: 0o700 });
    const stateFile = path.join(ws.moduleDir, "agentapi-state.json");
    const name = (day: number) => `agentapi-state.json.set-aside-2026-01-0${day}T00-00-00-000Z`;
    for (let day = 1; day <= 7; day++) await writeFile(path.join(ws.moduleDir, name(day)), "{}");
    const chat = {
      version: 1,
      messages: [{ id: 0, message: "an old chat", role: "agent", time: "2026-11-01T00:00:00Z" }],
      initial_prompt: "",
      initial_prompt_sent: false,
    };
    await writeFile(stateFile, JSON.stringify(chat));
    const rendered = await render(ws, { continue: false });
    await start(ws, rendered);
    const kept = await setAside(ws.moduleDir);
    expect(kept).toHaveLength(5);
    expect(kept.slice(0, 4)).toEqual([4, 5, 6, 7].map(name));
    expect(await readFile(path.join(ws.moduleDir, kept[4]!), "utf8")).toBe(JSON.stringify(chat));
    await stop(ws, rendered);
  });
});

// The start coder_script around the binaries it runs: a goose whose `session
// list` fails or that dies, agentapi or goose missing from PATH, failing
// pre/post install scripts, and installing both from the configured URLs.

import { writeFileSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, readlink, stat, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DOUBLE_ONLY, skipAllFor } from "../../support/vitest/skips.js";
import {
  agentStartArgs,
  gooseMessages,
  gooseTarball,
  gooseUnderTest,
  run,
  sha256,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import { agentapiFrom, agentapiRoute, gooseFrom, gooseRoute, mirrorServing } from "./downloads-scenario.js";
import {
  agentapiDir,
  cycle,
  expectFailed,
  expectOk,
  fakeGoose,
  launchRecord,
  newWorkspace,
  PLAIN,
  PROMPT,
  render,
  runWithPath,
  SESSION,
  SYSTEM_PATH,
  setup,
  start,
  stop,
  waitTurns,
} from "./scenario.js";
import { agentCommand, agentLaunches, deliveredIn, exists, gooseSessions, readPid } from "./start-scenario.js";

describe("start script", () => {
  // Double-only: these put a fake goose around the double on PATH, and read
  // the double's event log for what the module did with it.
  describe("when Goose cannot read its sessions", () => {
    skipAllFor(gooseUnderTest().real ? DOUBLE_ONLY : null);
    /** A goose on PATH whose `session list` and `export` fail, as with a locked or newer database; everything else is the double. */
    const brokenListGoose = (ws: Workspace) =>
      fakeGoose(
        ws,
        "broken-list-bin",
        `case "$1 $2" in "session list" | "session export") echo "Error: database is locked" >&2; exit 1;; esac\nexec '${ws.goose.bin}' "$@"`,
      );

    it("falls back to a read-only look at the database and still resumes", async () => {
      const { ws, rendered } = await setup();
      await cycle(ws, rendered);
      const [session] = await gooseSessions(ws);

      const before = (await ws.events()).length;
      const pathDirs = [await brokenListGoose(ws), agentapiDir(), ...SYSTEM_PATH];
      expectOk(await runWithPath(ws, rendered, pathDirs), "second start");
      await ws.waitFor("Goose resumed", async () =>
        (await ws.events()).slice(before).find((e) => e.event === "resume"),
      );
      const events = (await ws.events()).slice(before);
      expect(events.filter((e) => e.event === "resume")).toEqual([
        expect.objectContaining({ session_id: session!.id }),
      ]);
      expect(events.some((e) => e.event === "session_created")).toBe(false);
      await ws.waitStable();
      expect(await deliveredIn(ws)).toEqual([session!.id]);
    });

    it("without sqlite3 it cannot tell, says so, and starts cold so the prompt is not lost", async () => {
      const { ws, rendered } = await setup();
      await cycle(ws, rendered);
      const [first] = await gooseSessions(ws);

      // Everything in /usr/bin except sqlite3.
      const noSqlite = path.join(ws.home, "no-sqlite-bin");
      await mkdir(noSqlite);
      for (const name of await readdir("/usr/bin")) {
        if (!name.startsWith("sqlite")) await symlink(path.join("/usr/bin", name), path.join(noSqlite, name));
      }
      const before = (await ws.events()).length;
      const started = await runWithPath(ws, rendered, [await brokenListGoose(ws), agentapiDir(), noSqlite]);
      expectOk(started, "second start");
      expect(started.stdout).toMatch(/session list/);
      expect(started.stdout).toMatch(/sqlite3/);
      await ws.waitFor("the prompt in a new session", async () => (await deliveredIn(ws)).length > 1);
      await ws.waitStable();
      expect((await launchRecord(ws)).mode).toBe("cold");
      const delivered = await deliveredIn(ws);
      expect(delivered).toHaveLength(2);
      expect(delivered[0]).toBe(first!.id);
      expect(delivered[1]).not.toBe(first!.id);
      const events = (await ws.events()).slice(before);
      expect(events.some((e) => e.event === "resume")).toBe(false);
      expect(events.filter((e) => e.event === "session_created")).toEqual([
        expect.objectContaining({ session_id: delivered[1] }),
      ]);
    });
  });

  // Double-only: a fake goose around the double stands in for one that cannot start.
  it.for([
    ["at once", false, /AgentAPI exited \(code 1\) before it was ready|Goose exited right after it started/],
    // Only once the start has seen AgentAPI answer: then only the settle watch catches this.
    ["after AgentAPI is up", true, /Goose exited right after it started/],
  ] as const)(
    "a Goose that dies %s fails the start with AgentAPI's log, not a false success",
    async ([, afterUp, message], { skip }) => {
      skip(gooseUnderTest().real, DOUBLE_ONLY);
      const { ws, rendered } = await setup();
      // Written when the start's log says AgentAPI answered; the fake goose
      // waits for it (at most 60 s, so a start that never gets there still ends).
      const answered = path.join(ws.home, "agentapi-answered");
      const waitForAnswer = afterUp
        ? `i=0; while [ ! -e '${answered}' ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done\n`
        : "";
      // Probes work; the interactive session dies, as Goose does with an unusable provider.
      const script = `if [ "$1" = session ] && [ "$2" = list ] || [ "$1" = --version ]; then exec '${ws.goose.bin}' "$@"; fi\necho "Error: provider rejected the API key" >&2\n${waitForAnswer}exit 1`;
      const dir = await fakeGoose(ws, "dying-goose-bin", script);
      const pathDirs = [dir, agentapiDir(), ...SYSTEM_PATH];
      let marked = false;
      const result = await run("/bin/sh", agentStartArgs(rendered), {
        cwd: ws.home,
        env: { ...ws.env(), PATH: pathDirs.join(":") },
        onStdout: (stdout) => {
          if (marked || !/AgentAPI \(PID \d+\) listens on port/.test(stdout)) return;
          marked = true;
          writeFileSync(answered, "");
        },
      });
      expectFailed(result);
      expect(result.stderr).toMatch(message);
      // The tail of AgentAPI's log, with its diagnosis of the agent's exit.
      expect(result.stderr).toContain("agent exited with error");
      expect(await ws.processes()).toEqual([]);
    },
  );

  it.each([
    // The other binary stays on PATH, so the message is about the missing one.
    ["agentapi", "install_agentapi", () => gooseUnderTest().pathDir],
    ["goose", "install_goose", agentapiDir],
  ])("%s missing from PATH with %s = false fails with a message naming both", async (binary, variable, otherDir) => {
    const { ws, rendered } = await setup();
    const result = await runWithPath(ws, rendered, [otherDir(), ...SYSTEM_PATH]);
    expectFailed(result);
    expect(result.stderr).toMatch(new RegExp(`(^|[^_])${binary}\\b`));
    expect(result.stderr).toContain(variable);
    expect(await ws.processes()).toEqual([]);
    expect(await ws.status()).toBeNull();
  });

  it.each(["pre_install", "post_install"])(
    "a failing %s_script stops the start with its output and starts no AgentAPI",
    async (step) => {
      const { ws, rendered } = await setup({ [`${step}_script`]: "echo boom; exit 3" });
      const result = await ws.runStart(rendered);
      expectFailed(result);
      expect(result.stderr).toContain(`${step}_script`);
      expect(result.stderr).toContain("boom");
      expect(await readFile(path.join(ws.moduleDir, "logs", `${step}.log`), "utf8")).toContain("boom");
      expect(await ws.status()).toBeNull();
      expect(await exists(path.join(ws.moduleDir, "agentapi.pid"))).toBe(false);
      expect(await ws.processes()).toEqual([]);
      // Goose never ran: its database holds no message (a never-run Goose has none at all).
      expect(await gooseMessages(ws.gooseDb)).toEqual([]);
      if (!ws.goose.real) expect(agentLaunches(await ws.events())).toEqual([]);
    },
  );

  it("asks the installed agentapi for its version once per start, and the version gate decides on that answer", async () => {
    const ws = await newWorkspace();
    // The release the mirror serves: agentapi behind a script that notes each command line, then runs it.
    const calls = path.join(ws.home, "agentapi-calls");
    const noting = Buffer.from(`#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\nexec '${tools.agentapiNew}' "$@"\n`);
    const assetPath = agentapiRoute();
    const mirror = await mirrorServing({ [assetPath]: noting });
    const rendered = await render(ws, agentapiFrom(mirror.url, sha256(noting)));
    const versions = async () => (await readFile(calls, "utf8")).split("\n").filter((line) => line === "--version");
    const gate = `state persistence on: agentapi ${tools.agentapiNewVersion} >= 0.12.0`;

    const first = await start(ws, rendered);
    expect(first.stdout).toContain("downloads: agentapi verified;");
    expect(first.stdout).toContain(gate);
    expect(await versions()).toHaveLength(1);
    await stop(ws, rendered);

    // The pin is checked again (SHA-256); the file that answered is not asked again.
    const second = await start(ws, rendered);
    expect(second.stdout).toContain("downloads: agentapi verified (already installed);");
    expect(second.stdout).toContain(gate);
    expect(await versions()).toHaveLength(1);
  });

  it("asks an agentapi found on PATH for its version in the install, beside Goose's check, and the start asks no second time", async () => {
    const ws = await newWorkspace();
    const calls = path.join(ws.home, "agentapi-calls");
    const imageBin = path.join(ws.home, "image-bin");
    await mkdir(imageBin);
    const agentapi = path.join(imageBin, "agentapi");
    writeFileSync(agentapi, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\nexec '${tools.agentapiNew}' "$@"\n`, {
      mode: 0o755,
    });
    const rendered = await render(ws, PLAIN);

    const started = await start(ws, rendered, agentapi);
    expect(started.stdout).toContain("downloads: agentapi none (install_agentapi = false)");
    expect(started.stdout).toContain(`state persistence on: agentapi ${tools.agentapiNewVersion} >= 0.12.0`);
    const versions = (await readFile(calls, "utf8")).split("\n").filter((line) => line === "--version");
    expect(versions).toHaveLength(1);
    // The install's answer, kept for the start by the binary's identity.
    const memo = JSON.parse(await readFile(path.join(ws.moduleDir, "versions.json"), "utf8"));
    expect(memo.answers.find((a: { bin: string }) => a.bin === agentapi)?.output).toContain(tools.agentapiNewVersion);
    await stop(ws, rendered, agentapi);

    // The next boot's install recalls it too, while the file is the one that answered.
    await start(ws, rendered, agentapi);
    expect((await readFile(calls, "utf8")).split("\n").filter((line) => line === "--version")).toHaveLength(1);
    await stop(ws, rendered, agentapi);
  });

  it("installs the default AgentAPI and Goose from the configured URLs once, side by side, verified, and reuses them", async () => {
    const ws = await newWorkspace();
    // tools/setup.sh builds the module's default agentapi_version, so leaving
    // the variable out below installs exactly the binary this suite runs.
    const version = tools.agentapiNewVersion;
    const assetPath = agentapiRoute();
    // The tarball holds the Goose under test; ask for the version it reports,
    // so the next start finds the wanted version already installed.
    const reported = await run(ws.goose.bin, ["--version"], { env: ws.env() });
    const gooseVersion = /\d+\.\d+\.\d+/.exec(reported.stdout)?.[0];
    expect(gooseVersion, reported.stdout).toBeDefined();
    const tarballPath = gooseRoute(gooseVersion as string);
    const agentapi = await readFile(tools.agentapiNew);
    const tarball = await gooseTarball(ws.goose.bin);
    const mirror = await mirrorServing({ [assetPath]: agentapi, [tarballPath]: tarball });
    // Neither download is answered before both were asked for: one after the
    // other, the first would wait out the bound.
    mirror.holdTogether([assetPath, tarballPath], 20_000);
    const rendered = await render(ws, {
      ...agentapiFrom(mirror.url, sha256(agentapi)),
      ...gooseFrom(mirror.url, sha256(tarball), gooseVersion as string),
    });
    // Neither agentapi nor goose is on PATH: only the downloads can make this work.
    const first = await runWithPath(ws, rendered, SYSTEM_PATH);
    expectOk(first, "first start");
    expect([...mirror.requests].sort()).toEqual([assetPath, tarballPath].sort());
    expect(mirror.together()).toBe("met");
    expect(first.stdout).toContain("downloads: agentapi verified; goose verified\n");
    // The start names the Goose it runs, as that Goose reported it.
    expect(first.stdout).toContain(`goose-module: goose ${gooseVersion}: `);

    const agentapiBin = path.join(ws.moduleDir, "bin", "agentapi");
    expect((await lstat(agentapiBin)).isFile()).toBe(true);
    const versionOut = await run(agentapiBin, ["--version"]);
    expect(versionOut.stdout).toContain(version);
    const pid = await readPid(path.join(ws.moduleDir, "agentapi.pid"));
    expect(await readlink(`/proc/${pid}/exe`)).toBe(agentapiBin);

    const gooseBin = path.join(ws.home, ".local", "bin", "goose");
    // By digest: a real Goose is about 150 MB, past what a deep equality of two Buffers can walk.
    expect(sha256(await readFile(gooseBin))).toBe(sha256(await readFile(ws.goose.bin)));
    // Executable by the user's other tools too, whatever the umask.
    expect((await stat(gooseBin)).mode & 0o777).toBe(0o755);
    expect(await readdir(path.dirname(gooseBin))).toEqual(["goose"]);
    expect((await agentCommand(pid))[0]).toBe(gooseBin);
    await waitTurns(ws, 1);
    expect(await ws.deliveries(PROMPT)).toBe(1);

    await stop(ws, rendered);
    const before = mirror.requests.length;
    const second = await runWithPath(ws, rendered, SYSTEM_PATH);
    expectOk(second, "second start");
    expect(mirror.requests.slice(before)).toEqual([]);
    // Pinned, so both are hashed again before they run.
    expect(second.stdout).toContain(
      "downloads: agentapi verified (already installed); goose verified (already installed)\n",
    );
    const secondPid = await readPid(path.join(ws.moduleDir, "agentapi.pid"));
    expect(await readlink(`/proc/${secondPid}/exe`)).toBe(agentapiBin);
    // The installed Goose resumes the session, by the id the start read.
    expect((await launchRecord(ws)).mode).toBe("warm");
    const [session] = await ws.sessionsNamed(SESSION);
    expect(await agentCommand(secondPid)).toEqual([
      gooseBin,
      "session",
      "--resume",
      "--session-id",
      session,
      "--history",
    ]);
    await ws.waitStable();
    expect(await ws.deliveries(PROMPT)).toBe(1);
  });
});

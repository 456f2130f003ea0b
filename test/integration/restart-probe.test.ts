// A supervisor's restart that cannot tell whether Goose still has the session:
// `goose session list` fails and the sqlite3 fallback fails too. The restart
// must not start a new session under the same name or set the chat aside; it
// fails, is retried, and ends in a give-up that says why.

import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../../support/workspace/index.js";
import { agentapiPids, flat, newWorkspace, PROMPT, render, SESSION, savedState, start, waitTurns } from "./scenario.js";

/**
 * Stand-ins, first on PATH, for a Goose whose session list fails (as it does
 * on a locked or unreadable database) and for an image without a working
 * sqlite3, both only while `broken` exists; otherwise the Goose under test
 * and the image's sqlite3. The test reads Goose's sessions with the Goose
 * under test itself.
 */
async function breakableTools(goose: string, broken: string): Promise<string> {
  const dir = await scratchDir("breakable");
  await writeFile(
    path.join(dir, "goose"),
    [
      "#!/bin/sh",
      `if [ -e '${broken}' ] && [ "$1" = session ] && { [ "$2" = list ] || [ "$2" = ls ]; }; then`,
      "  echo 'Error: database is locked' >&2",
      "  exit 1",
      "fi",
      `exec '${goose}' "$@"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  await writeFile(
    path.join(dir, "sqlite3"),
    // Broken, it fails the way a missing command does (exit 127); otherwise it is the image's own, if any.
    [
      "#!/bin/sh",
      `[ -e '${broken}' ] || exec /usr/bin/sqlite3 "$@"`,
      "echo 'sqlite3: not found' >&2",
      "exit 127",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return dir;
}

describe("a restart that cannot tell whether Goose has the session", () => {
  it("fails and is retried, never goes cold: one Goose session, no chat set aside, then a give-up that says why", async () => {
    const ws = await newWorkspace();
    const broken = path.join(await scratchDir("knob"), "broken");
    const tools = await breakableTools(ws.goose.bin, broken);
    ws.setEnv({ PATH: `${tools}:${ws.env().PATH}` });
    const rendered = await render(ws);
    await start(ws, rendered);
    await waitTurns(ws, 1);
    const [session] = await ws.sessionsNamed(SESSION);
    const shown = (await ws.messages()).map((m) => flat(m.content));
    await ws.waitFor("the chat autosaved", async () => ((await savedState(ws))?.messages.length ?? 0) === shown.length);

    await writeFile(broken, "");
    const [agentapi] = await agentapiPids(ws);
    process.kill(agentapi as number, "SIGKILL");
    const supervisorLog = path.join(ws.moduleDir, "logs", "supervisor.log");
    const log = await ws.waitFor(
      "the supervisor's give-up",
      async () => {
        const text = await readFile(supervisorLog, "utf8").catch(() => "");
        return text.includes("gave up:") ? text : undefined;
      },
      120_000,
    );

    const refusal = `could not tell whether Goose still has session "${SESSION}"`;
    expect(log.match(new RegExp(`restart \\d failed: ${refusal}`, "g"))).toHaveLength(5);
    expect(log).toMatch(/gave up: 5 restarts failed within 10 minutes/);
    expect(await agentapiPids(ws)).toEqual([]);
    expect((await readdir(ws.moduleDir)).filter((name) => name.includes("set-aside"))).toEqual([]);
    expect(((await savedState(ws))?.messages ?? []).map((m) => flat(m.message))).toEqual(shown);
    expect(await ws.sessionsNamed(SESSION)).toEqual([session]);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    // Five restarts back off for 31 s in all before the give-up.
  }, 240_000);
});

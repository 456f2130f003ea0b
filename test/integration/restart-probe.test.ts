// A supervisor's restart that cannot tell whether Goose still has the session:
// `goose session list` and `export` fail and the sqlite3 fallback fails too. The restart
// must not start a new session under the same name or set the chat aside; it
// fails, is retried, and ends in a give-up that says why.

import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../../support/workspace/index.js";
import {
  agentapiPids,
  flat,
  newWorkspace,
  PROMPT,
  render,
  SESSION,
  savedState,
  start,
  waitGiveUp,
  waitTurns,
} from "./scenario.js";

/**
 * Stand-ins, first on PATH, for a Goose whose session list and export fail (as they do
 * on a locked or unreadable database) and for an image without a working
 * sqlite3 (exit 127, as a missing command), both only while `broken` exists;
 * otherwise the Goose under test and the image's sqlite3.
 */
async function breakableTools(goose: string, broken: string): Promise<string> {
  const dir = await scratchDir("breakable");
  const list = `[ "$1" = session ] && { [ "$2" = list ] || [ "$2" = ls ] || [ "$2" = export ]; }`;
  const fail = (message: string, code: number) => `echo '${message}' >&2\nexit ${code}\n`;
  await writeFile(
    path.join(dir, "goose"),
    `#!/bin/sh\nif [ -e '${broken}' ] && ${list}; then\n${fail("Error: database is locked", 1)}fi\nexec '${goose}' "$@"\n`,
    { mode: 0o755 },
  );
  const sqlite3 = `#!/bin/sh\n[ -e '${broken}' ] || exec /usr/bin/sqlite3 "$@"\n${fail("sqlite3: not found", 127)}`;
  await writeFile(path.join(dir, "sqlite3"), sqlite3, { mode: 0o755 });
  return dir;
}

describe("a restart that cannot tell whether Goose has the session", () => {
  it("fails and is retried, never goes cold: one Goose session, no chat set aside, then a give-up that says why", async () => {
    const ws = await newWorkspace();
    const broken = path.join(await scratchDir("knob"), "broken");
    ws.setEnv({ PATH: `${await breakableTools(ws.goose.bin, broken)}:${ws.env().PATH}` });
    const rendered = await render(ws);
    await start(ws, rendered);
    await waitTurns(ws, 1);
    const [session] = await ws.sessionsNamed(SESSION);
    const shown = (await ws.messages()).map((m) => flat(m.content));
    const saved = async () => ((await savedState(ws))?.messages ?? []).map((m) => flat(m.message));
    await ws.waitFor("the chat autosaved", async () => (await saved()).length === shown.length);

    await writeFile(broken, "");
    const [agentapi] = await agentapiPids(ws);
    process.kill(agentapi as number, "SIGKILL");
    const log = await waitGiveUp(ws);

    const refusal = `could not tell whether Goose still has session "${SESSION}"`;
    expect(log.match(new RegExp(`restart \\d failed: ${refusal}`, "g"))).toHaveLength(5);
    expect(log).toMatch(/gave up: 5 restarts failed within 10 minutes/);
    expect(await agentapiPids(ws)).toEqual([]);
    expect((await readdir(ws.moduleDir)).filter((name) => name.includes("set-aside"))).toEqual([]);
    expect(await saved()).toEqual(shown);
    expect(await ws.sessionsNamed(SESSION)).toEqual([session]);
    expect(await ws.deliveries(PROMPT)).toBe(1);
  }, 240_000);
});

// Which Goose session a start resumes, on real AgentAPI and the Goose under
// test: a plain workspace nobody typed in, sessions that already share the
// module's name, and a home where coder/goose 3.0.1 ran before.

import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { newWorkspace, output, PLAIN, render, SESSION, start, stop } from "./scenario.js";

const setAsideFiles = async (dir: string) => (await readdir(dir)).filter((name) => name.includes("set-aside"));

describe("an unused plain workspace restarts quietly", () => {
  it("three restarts with nobody typing: one Goose session with the module's name, nothing set aside, no word of a prompt; a message then lands in that session", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, PLAIN);
    await start(ws, rendered);
    await ws.waitStable();
    const named = await ws.sessionsNamed(SESSION);
    expect(named).toHaveLength(1);
    await stop(ws, rendered);

    for (let restart = 1; restart <= 3; restart++) {
      const started = output(await start(ws, rendered));
      await ws.waitStable();
      expect(await ws.sessionsNamed(SESSION), `restart ${restart}`).toEqual(named);
      expect(started, `restart ${restart}`).not.toMatch(/prompt/i);
      expect(started, `restart ${restart}`).not.toMatch(/set aside|moved .* to /);
      expect(await setAsideFiles(ws.moduleDir), `restart ${restart}`).toEqual([]);
      await stop(ws, rendered);
    }

    await start(ws, rendered);
    await ws.waitStable();
    await ws.send("hello after three quiet restarts");
    expect(await ws.sessionsNamed(SESSION)).toEqual(named);
    expect(await ws.deliveries("hello after three quiet restarts")).toBe(1);
    await stop(ws, rendered);
  }, 240_000);
});

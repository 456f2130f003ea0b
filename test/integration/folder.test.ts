// The start against a `folder` that a clone step has not created yet, as on a
// Coder release that ignores coder_script_order and runs every script at once:
// the start creates it empty and says so, and a clone into it still works.

import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../support/workspace/index.js";
import { expectOk, newWorkspace, output, PLAIN, render, start, stop } from "./scenario.js";

async function git(args: string[], cwd: string): Promise<void> {
  const result = await run("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd,
    timeoutMs: 30_000,
  });
  expect(result.code, `git ${args.join(" ")}: ${result.stderr}`).toBe(0);
}

describe("start: a missing folder", () => {
  it("is created empty and logged once, and a later clone into it succeeds", async () => {
    const ws = await newWorkspace();
    const folder = path.join(ws.home, "work", "project");
    const rendered = await render(ws, { ...PLAIN, folder });

    const started = await start(ws, rendered);
    expect(output(started)).toContain(`folder ${folder} did not exist; created it empty`);
    await ws.waitStable();
    // Goose and AgentAPI run in it and have written nothing there.
    expect(await readdir(folder)).toEqual([]);

    // The clone step that runs after the start, into the folder Goose works in.
    const origin = path.join(ws.home, "origin");
    await mkdir(origin);
    await writeFile(path.join(origin, "README.md"), "# project\n");
    await git(["init", "-q", "-b", "main"], origin);
    await git(["add", "README.md"], origin);
    await git(["commit", "-q", "-m", "first"], origin);
    await git(["clone", "-q", "--", origin, folder], ws.home);
    expect((await readdir(folder)).sort()).toEqual([".git", "README.md"]);

    await stop(ws, rendered);
    const again = await ws.runStart(rendered);
    expectOk(again, "second start");
    expect(output(again)).not.toContain("did not exist");
  });
});

// Where AgentAPI's per-run upload folder goes: AgentAPI makes an empty
// agentapi-uploads-* under $TMPDIR at every start and removes it only in its
// graceful Stop (lib/httpapi/server.go, coder/agentapi @ v0.12.2), so a run
// that is killed (kill -9, the out-of-memory killer) leaves it behind. The module gives AgentAPI
// a private TMPDIR in its folder and empties it of earlier runs' folders at the
// next launch; Goose, AgentAPI's child, gets the user's TMPDIR back.

import { lstat, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childPids, scratchDir, type Workspace } from "../../support/workspace/index.js";
import { environOf, newWorkspace, render, start, stop, theAgentapi, waitRestarted } from "./scenario.js";

const uploads = async (dir: string) =>
  (await readdir(dir).catch(() => [] as string[])).filter((name) => name.startsWith("agentapi-uploads-"));

/** A workspace whose user has a TMPDIR of their own, to see what lands there; the module's TMPDIR. */
async function withUserTmpdir(): Promise<{ ws: Workspace; userTmp: string; moduleTmp: string }> {
  const ws = await newWorkspace();
  const userTmp = await scratchDir("user-tmpdir");
  ws.setEnv({ TMPDIR: userTmp });
  return { ws, userTmp, moduleTmp: path.join(ws.moduleDir, "tmp") };
}

describe("AgentAPI's temporary folder", () => {
  it("a killed AgentAPI leaves nothing in the user's TMPDIR; Goose keeps the user's TMPDIR", async () => {
    const { ws, userTmp, moduleTmp } = await withUserTmpdir();
    const rendered = await render(ws);
    await start(ws, rendered);

    const agentapi = await theAgentapi(ws);
    const [goose] = await childPids(agentapi);
    expect((await environOf(agentapi)).get("TMPDIR")).toBe(moduleTmp);
    expect((await environOf(goose as number)).get("TMPDIR")).toBe(userTmp);
    expect((await lstat(moduleTmp)).mode & 0o777).toBe(0o700);
    const killedRuns = await uploads(moduleTmp);
    expect(killedRuns).toHaveLength(1);

    // The killed run cannot remove its folder; the supervisor's restart launches a new AgentAPI.
    process.kill(agentapi, "SIGKILL");
    await waitRestarted(ws, agentapi);
    // The restart's launch removed the killed run's folder.
    expect(await uploads(moduleTmp)).not.toContain(killedRuns[0]);
    await stop(ws, rendered);
    expect(await uploads(userTmp)).toEqual([]);
  });

  it("the next start removes earlier runs' upload folders from the module's TMPDIR, and only those", async () => {
    const { ws, moduleTmp } = await withUserTmpdir();
    const rendered = await render(ws);
    await start(ws, rendered);
    await stop(ws, rendered);
    // What a killed run leaves (os.MkdirTemp's name), one with a file in it,
    // one that is a link (only the link goes), and a file of another name.
    await mkdir(path.join(moduleTmp, "agentapi-uploads-1234567"));
    await mkdir(path.join(moduleTmp, "agentapi-uploads-7654321"));
    await writeFile(path.join(moduleTmp, "agentapi-uploads-7654321", "upload.txt"), "x");
    const outside = await scratchDir("link-target");
    await writeFile(path.join(outside, "keep.txt"), "keep");
    await symlink(outside, path.join(moduleTmp, "agentapi-uploads-link"));
    await writeFile(path.join(moduleTmp, "other.txt"), "other");

    await start(ws, rendered);
    const now = await uploads(moduleTmp);
    expect(now).toHaveLength(1);
    expect(now[0]).toMatch(/^agentapi-uploads-\d+$/);
    for (const old of ["1234567", "7654321"]) expect(now).not.toContain(`agentapi-uploads-${old}`);
    expect(await readdir(outside)).toEqual(["keep.txt"]);
    expect(await readFile(path.join(moduleTmp, "other.txt"), "utf8")).toBe("other");
    await stop(ws, rendered);
  });
});

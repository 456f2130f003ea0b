import { chmod, lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configureGoose, describeOutcome, gooseConfigDir } from "../../../src/goose/setup.js";

let root: string;
let n = 0;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "goose-setup-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function home(): Promise<{ home: string; dir: string; config: string; hints: string; layer: string }> {
  const h = path.join(root, `home-${n++}`);
  await mkdir(h);
  const dir = path.join(h, ".config", "goose");
  const layer = path.join(h, ".coder-modules", "coder", "goose", "goose-config.json");
  return { home: h, dir, config: path.join(dir, "config.yaml"), hints: path.join(dir, ".goosehints"), layer };
}

const settings = (
  over: Partial<{ systemPrompt: string; extensions: Record<string, Record<string, unknown>> }> = {},
) => ({
  appSlug: "goose",
  systemPrompt: "",
  extensions: {},
  ...over,
});
const setup = (h: string, over?: Parameters<typeof settings>[0], port = 3284) =>
  configureGoose(settings(over), {
    port,
    env: {},
    home: h,
    layerFile: path.join(h, ".coder-modules", "coder", "goose", "goose-config.json"),
  });
const layerOf = async (file: string) => JSON.parse(await readFile(file, "utf8"));
const mode = async (p: string) => (await stat(p)).mode & 0o777;

describe("gooseConfigDir", () => {
  it("follows GOOSE_PATH_ROOT, XDG_CONFIG_HOME, then the default", () => {
    expect(gooseConfigDir({ GOOSE_PATH_ROOT: "/g" }, "/h")).toBe("/g/config");
    expect(gooseConfigDir({ GOOSE_PATH_ROOT: "rel", XDG_CONFIG_HOME: "/x" }, "/h")).toBe("/x/goose");
    expect(gooseConfigDir({ XDG_CONFIG_HOME: "rel" }, "/h")).toBe("/h/.config/goose");
  });
});

describe("configureGoose", () => {
  it("writes the extensions to its own layer, 0600, and never creates or touches config.yaml", async () => {
    const { home: h, dir, config, layer } = await home();
    const result = await setup(h);
    expect(result.config).toMatchObject({ file: layer, action: "created", detail: "extensions: coder, developer" });
    expect(result.hints).toEqual({ file: path.join(dir, ".goosehints"), action: "unchanged" });
    expect(result.warnings).toEqual([]);
    expect(await mode(layer)).toBe(0o600);
    expect(await mode(path.dirname(layer))).toBe(0o700);
    const parsed = await layerOf(layer);
    expect(Object.keys(parsed)).toEqual(["extensions"]);
    expect(parsed.extensions.coder.envs.CODER_MCP_AI_AGENTAPI_URL).toBe("http://localhost:3284");
    await expect(lstat(config)).rejects.toThrow(/ENOENT/);
    await expect(lstat(path.join(dir, ".goosehints"))).rejects.toThrow(/ENOENT/);

    await mkdir(dir, { recursive: true });
    const user = "# mine\nextensions:\n  developer:\n    enabled: false\n";
    await writeFile(config, user);
    const before = await stat(config);
    await setup(h, { extensions: { memory: { type: "builtin" } } });
    const after = await stat(config);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(await readFile(config, "utf8")).toBe(user);
  });

  it("does not write at all when nothing changes: same inode, same mtime, same bytes", async () => {
    const { home: h, hints, layer } = await home();
    await setup(h, { systemPrompt: "Be brief." });
    const before = await Promise.all([stat(layer), stat(hints)]);
    // Not a wait for anything: it makes a rewrite show as a different mtime.
    await new Promise((r) => setTimeout(r, 20));
    const result = await setup(h, { systemPrompt: "Be brief." });
    expect(result.config.action).toBe("unchanged");
    expect(result.hints.action).toBe("unchanged");
    const after = await Promise.all([stat(layer), stat(hints)]);
    expect(after.map((s) => [s.ino, s.mtimeMs])).toEqual(before.map((s) => [s.ino, s.mtimeMs]));
  });

  it("rewrites the layer when a setting changes", async () => {
    const { home: h, layer } = await home();
    await setup(h);
    const result = await setup(h, {}, 4000);
    expect(result.config.action).toBe("written");
    expect((await layerOf(layer)).extensions.coder.envs.CODER_MCP_AI_AGENTAPI_URL).toBe("http://localhost:4000");
  });

  it("replaces a symlink at the layer's path instead of writing through it", async () => {
    const { home: h, layer } = await home();
    const elsewhere = path.join(h, "elsewhere.json");
    await writeFile(elsewhere, "{}\n");
    await mkdir(path.dirname(layer), { recursive: true });
    await symlink(elsewhere, layer);
    expect((await setup(h)).config.action).toBe("written");
    expect((await lstat(layer)).isFile()).toBe(true);
    expect(await readFile(elsewhere, "utf8")).toBe("{}\n");
  });

  it("keeps a symlinked .goosehints a link and updates its target in place", async () => {
    const { home: h, dir, hints } = await home();
    const dotfiles = path.join(h, "dotfiles");
    await mkdir(dotfiles, { mode: 0o755 });
    await chmod(dotfiles, 0o755);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dotfiles, "hints"), "Mine.\n", { mode: 0o644 });
    await chmod(path.join(dotfiles, "hints"), 0o644);
    await symlink(path.join(dotfiles, "hints"), hints);
    const result = await setup(h, { systemPrompt: "Be brief." });
    expect(result.hints.action).toBe("written");
    expect(await readlink(hints)).toBe(path.join(dotfiles, "hints"));
    const target = await readFile(path.join(dotfiles, "hints"), "utf8");
    expect(target.startsWith("Mine.\n")).toBe(true);
    expect(target).toContain("Be brief.");
    expect(await mode(path.join(dotfiles, "hints"))).toBe(0o644);
  });

  it("leaves a .goosehints link whose target sits in a folder others can write to, and says so", async () => {
    const { home: h, dir, hints } = await home();
    const shared = path.join(h, "shared");
    await mkdir(shared);
    await chmod(shared, 0o777);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(shared, "hints"), "a\n");
    await symlink(path.join(shared, "hints"), hints);
    const result = await setup(h, { systemPrompt: "Be brief." });
    expect(result.hints.action).toBe("skipped");
    expect(result.warnings).toEqual([expect.stringMatching(/other users can write to.*system prompt does not reach/)]);
    expect(await readFile(path.join(shared, "hints"), "utf8")).toBe("a\n");
  });

  it("leaves a dangling .goosehints link and a folder in its place alone", async () => {
    const { home: h, dir, hints } = await home();
    await mkdir(dir, { recursive: true });
    await symlink(path.join(h, "nowhere"), hints);
    expect((await setup(h, { systemPrompt: "x" })).hints.action).toBe("skipped");
    await expect(lstat(path.join(h, "nowhere"))).rejects.toThrow(/ENOENT/);
    await rm(hints);
    await mkdir(hints);
    expect((await setup(h, { systemPrompt: "x" })).warnings).toEqual([expect.stringMatching(/it is a folder/)]);
  });

  it("reports extensions it refused", async () => {
    const { home: h, layer } = await home();
    const result = await setup(h, { extensions: { "bad name": { type: "stdio" }, good: { type: "stdio", cmd: "x" } } });
    expect(result.warnings).toEqual([expect.stringMatching(/"bad name" may only contain/)]);
    expect(Object.keys((await layerOf(layer)).extensions)).toEqual(["coder", "developer", "good"]);
  });

  it("writes the system prompt to .goosehints once, and removes it when emptied", async () => {
    const { home: h, hints } = await home();
    expect(
      (await setup(h, { systemPrompt: `Be brief. <!-- coder goose module: system_prompt end -->` })).hints.action,
    ).toBe("created");
    const once = await readFile(hints, "utf8");
    expect(await mode(hints)).toBe(0o600);
    expect(
      (await setup(h, { systemPrompt: `Be brief. <!-- coder goose module: system_prompt end -->` })).hints.action,
    ).toBe("unchanged");
    expect(await readFile(hints, "utf8")).toBe(once);
    expect((await setup(h, { systemPrompt: "" })).hints).toMatchObject({
      action: "written",
      detail: "system prompt removed",
    });
    expect(await readFile(hints, "utf8")).toBe("");
  });
});

describe("describeOutcome", () => {
  it.each([
    [
      { file: "/c", action: "created", detail: "extensions set: coder" } as const,
      "/c: created (extensions set: coder)",
    ],
    [{ file: "/c", action: "unchanged" } as const, "/c: already up to date"],
    [{ file: "/c", action: "skipped", warning: "w" } as const, "/c: left unchanged"],
  ])("%j", (outcome, line) => expect(describeOutcome(outcome)).toBe(line));
});

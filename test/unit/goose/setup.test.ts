import { chmod, lstat, mkdir, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { configureGoose, describeOutcome, gooseConfigDir } from "../../../src/goose/setup.js";
import { modeOf, readText, scratchFolders } from "../scratch.js";

const fresh = scratchFolders("goose-setup-test");
async function home() {
  const h = await fresh();
  const dir = path.join(h, ".config", "goose");
  const layer = path.join(h, ".coder-modules", "coder", "goose", "goose-config.json");
  return { home: h, dir, config: path.join(dir, "config.yaml"), hints: path.join(dir, ".goosehints"), layer };
}

type Over = { systemPrompt?: string; extensions?: Record<string, Record<string, unknown>> };
const setup = (h: string, over: Over = {}, port = 3284) =>
  configureGoose(
    { appSlug: "goose", systemPrompt: "", extensions: {}, ...over },
    { port, env: {}, home: h, layerFile: path.join(h, ".coder-modules", "coder", "goose", "goose-config.json") },
  );
const layerOf = async (file: string) => JSON.parse(await readText(file));

it("gooseConfigDir follows GOOSE_PATH_ROOT, XDG_CONFIG_HOME, then the default", () => {
  expect(gooseConfigDir({ GOOSE_PATH_ROOT: "/g" }, "/h")).toBe("/g/config");
  expect(gooseConfigDir({ GOOSE_PATH_ROOT: "rel", XDG_CONFIG_HOME: "/x" }, "/h")).toBe("/x/goose");
  expect(gooseConfigDir({ XDG_CONFIG_HOME: "rel" }, "/h")).toBe("/h/.config/goose");
});

it("writes the extensions to its own layer, 0600, and never creates or touches config.yaml", async () => {
  const { home: h, dir, config, layer } = await home();
  const result = await setup(h);
  expect(result).toMatchObject({
    config: { file: layer, action: "created", detail: "extensions: coder, developer" },
    hints: { file: path.join(dir, ".goosehints"), action: "unchanged" },
    warnings: [],
  });
  expect([await modeOf(layer), await modeOf(path.dirname(layer))]).toEqual([0o600, 0o700]);
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
  expect(await readText(config)).toBe(user);
});

it("does not write at all when nothing changes: same inode, same mtime, same bytes", async () => {
  const { home: h, hints, layer } = await home();
  await setup(h, { systemPrompt: "Be brief." });
  const before = await Promise.all([stat(layer), stat(hints)]);
  // Not a wait for anything: it makes a rewrite show as a different mtime.
  await new Promise((r) => setTimeout(r, 20));
  const result = await setup(h, { systemPrompt: "Be brief." });
  expect([result.config.action, result.hints.action]).toEqual(["unchanged", "unchanged"]);
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
  await writeFile(path.join(h, "elsewhere.json"), "{}\n");
  await mkdir(path.dirname(layer), { recursive: true });
  await symlink(path.join(h, "elsewhere.json"), layer);
  expect((await setup(h)).config.action).toBe("written");
  expect((await lstat(layer)).isFile()).toBe(true);
  expect(await readText(path.join(h, "elsewhere.json"))).toBe("{}\n");
});

it("keeps a symlinked .goosehints a link and updates its target in place", async () => {
  const { home: h, dir, hints } = await home();
  const target = path.join(h, "dotfiles", "hints");
  await mkdir(path.dirname(target));
  await chmod(path.dirname(target), 0o755);
  await mkdir(dir, { recursive: true });
  await writeFile(target, "Mine.\n");
  await chmod(target, 0o644);
  await symlink(target, hints);
  expect((await setup(h, { systemPrompt: "Be brief." })).hints.action).toBe("written");
  expect(await readlink(hints)).toBe(target);
  expect(await readText(target)).toMatch(/^Mine\.\n.*Be brief\./s);
  expect(await modeOf(target)).toBe(0o644);
});

it("leaves a .goosehints link whose target sits in a folder others can write to, and says so", async () => {
  const { home: h, dir, hints } = await home();
  const target = path.join(h, "shared", "hints");
  await mkdir(path.dirname(target));
  await chmod(path.dirname(target), 0o777);
  await mkdir(dir, { recursive: true });
  await writeFile(target, "a\n");
  await symlink(target, hints);
  const warning = expect.stringMatching(/other users can write to.*system prompt does not reach/);
  expect(await setup(h, { systemPrompt: "Be brief." })).toMatchObject({
    hints: { action: "skipped" },
    warnings: [warning],
  });
  expect(await readText(target)).toBe("a\n");
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

it("creates .goosehints 0600 for the system prompt, and empties it when the prompt is emptied", async () => {
  const { home: h, hints } = await home();
  expect((await setup(h, { systemPrompt: "Be brief." })).hints.action).toBe("created");
  expect(await modeOf(hints)).toBe(0o600);
  const emptied = (await setup(h, { systemPrompt: "" })).hints;
  expect(emptied).toMatchObject({ action: "written", detail: "system prompt removed" });
  expect(await readText(hints)).toBe("");
});

it.each([
  [{ action: "created", detail: "extensions set: coder" }, "/c: created (extensions set: coder)"],
  [{ action: "unchanged" }, "/c: already up to date"],
  [{ action: "skipped", warning: "w" }, "/c: left unchanged"],
] as const)("describeOutcome %j", (outcome, line) => expect(describeOutcome({ file: "/c", ...outcome })).toBe(line));

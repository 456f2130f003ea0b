import { chmod, lstat, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { configureGoose, describeOutcome, gooseConfigDir } from "../../../src/goose/setup.js";

let root: string;
let n = 0;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "goose-setup-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function home(): Promise<{ home: string; dir: string; config: string; hints: string }> {
  const h = path.join(root, `home-${n++}`);
  await mkdir(h);
  const dir = path.join(h, ".config", "goose");
  return { home: h, dir, config: path.join(dir, "config.yaml"), hints: path.join(dir, ".goosehints") };
}

const settings = (
  over: Partial<{ systemPrompt: string; extensions: Record<string, Record<string, unknown>> }> = {},
) => ({
  appSlug: "goose",
  systemPrompt: "",
  extensions: {},
  ...over,
});
const setup = (h: string, over?: Parameters<typeof settings>[0]) =>
  configureGoose(settings(over), { port: 3284, env: {}, home: h });
const mode = async (p: string) => (await stat(p)).mode & 0o777;

describe("gooseConfigDir", () => {
  it("follows GOOSE_PATH_ROOT, XDG_CONFIG_HOME, then the default", () => {
    expect(gooseConfigDir({ GOOSE_PATH_ROOT: "/g" }, "/h")).toBe("/g/config");
    expect(gooseConfigDir({ GOOSE_PATH_ROOT: "rel", XDG_CONFIG_HOME: "/x" }, "/h")).toBe("/x/goose");
    expect(gooseConfigDir({ XDG_CONFIG_HOME: "rel" }, "/h")).toBe("/h/.config/goose");
  });
});

describe("configureGoose", () => {
  it("creates config.yaml 0600 in folders created 0700, with only the extensions", async () => {
    const { home: h, dir, config } = await home();
    const result = await setup(h);
    expect(result.config).toMatchObject({ file: config, action: "created" });
    expect(result.hints).toEqual({ file: path.join(dir, ".goosehints"), action: "unchanged" });
    expect(result.warnings).toEqual([]);
    expect(await mode(config)).toBe(0o600);
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(path.dirname(dir))).toBe(0o700);
    const parsed = parse(await readFile(config, "utf8"));
    expect(Object.keys(parsed)).toEqual(["extensions"]);
    expect(parsed.extensions.coder.envs.CODER_MCP_AI_AGENTAPI_URL).toBe("http://localhost:3284");
    await expect(lstat(path.join(dir, ".goosehints"))).rejects.toThrow(/ENOENT/);
  });

  it("does not write at all when nothing changes: same inode, same mtime, same bytes", async () => {
    const { home: h, config } = await home();
    await setup(h, { systemPrompt: "Be brief." });
    const before = await stat(config);
    const bytes = await readFile(config, "utf8");
    // Not a wait for anything: it makes a rewrite show as a different mtime.
    await new Promise((r) => setTimeout(r, 20));
    const result = await setup(h, { systemPrompt: "Be brief." });
    expect(result.config.action).toBe("unchanged");
    expect(result.hints.action).toBe("unchanged");
    const after = await stat(config);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(await readFile(config, "utf8")).toBe(bytes);
  });

  it("keeps the user's text and the file's mode when it adds its entries", async () => {
    const { home: h, dir, config } = await home();
    await mkdir(dir, { recursive: true });
    const user = "# mine\nGOOSE_PROVIDER: openai # keep\nbig: 12345678901234567890\n";
    await writeFile(config, user);
    await chmod(config, 0o640);
    const result = await setup(h);
    expect(result.config).toMatchObject({ action: "written", detail: "extensions set: coder, developer" });
    const text = await readFile(config, "utf8");
    expect(text.startsWith(user)).toBe(true);
    expect(await mode(config)).toBe(0o640);
  });

  it("keeps a symlinked config.yaml a link and updates its target in place", async () => {
    const { home: h, dir, config } = await home();
    const dotfiles = path.join(h, "dotfiles");
    await mkdir(dotfiles, { mode: 0o755 });
    await chmod(dotfiles, 0o755);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dotfiles, "goose.yaml"), "GOOSE_CLI_THEME: dark\n", { mode: 0o644 });
    await chmod(path.join(dotfiles, "goose.yaml"), 0o644);
    await symlink(path.join(dotfiles, "goose.yaml"), config);
    const result = await setup(h);
    expect(result.config.action).toBe("written");
    expect((await lstat(config)).isSymbolicLink()).toBe(true);
    expect(await readlink(config)).toBe(path.join(dotfiles, "goose.yaml"));
    const target = await readFile(path.join(dotfiles, "goose.yaml"), "utf8");
    expect(target.startsWith("GOOSE_CLI_THEME: dark\n")).toBe(true);
    expect(parse(target).extensions.coder.cmd).toBe("coder");
    expect(await mode(path.join(dotfiles, "goose.yaml"))).toBe(0o644);
  });

  it("leaves a link whose target sits in a folder others can write to, and says what to add", async () => {
    const { home: h, dir, config } = await home();
    const shared = path.join(h, "shared");
    await mkdir(shared);
    await chmod(shared, 0o777);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(shared, "config.yaml"), "a: 1\n");
    await symlink(path.join(shared, "config.yaml"), config);
    const result = await setup(h, { extensions: { github: { type: "stdio", cmd: "gh" } } });
    expect(result.config.action).toBe("skipped");
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/other users can write to.*coder, developer, github/);
    expect(await readFile(path.join(shared, "config.yaml"), "utf8")).toBe("a: 1\n");
  });

  it("leaves a dangling link alone", async () => {
    const { home: h, dir, config } = await home();
    await mkdir(dir, { recursive: true });
    await symlink(path.join(h, "nowhere.yaml"), config);
    const result = await setup(h);
    expect(result.config.action).toBe("skipped");
    await expect(lstat(path.join(h, "nowhere.yaml"))).rejects.toThrow(/ENOENT/);
  });

  it("never overwrites a config that is not a YAML mapping", async () => {
    const { home: h, dir, config } = await home();
    await mkdir(dir, { recursive: true });
    await writeFile(config, "- just\n- a list\n");
    const before = await stat(config);
    const result = await setup(h);
    expect(result.config.action).toBe("skipped");
    expect(result.warnings[0]).toMatch(
      /config\.yaml was left unchanged: its top level is not a mapping.*coder, developer/,
    );
    const after = await stat(config);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(await readFile(config, "utf8")).toBe("- just\n- a list\n");
  });

  it("skips a folder where config.yaml should be", async () => {
    const { home: h, config } = await home();
    await mkdir(config, { recursive: true });
    const result = await setup(h);
    expect(result.config.action).toBe("skipped");
    expect(result.warnings[0]).toMatch(/it is a folder/);
  });

  it("reports extensions it refused", async () => {
    const { home: h, config } = await home();
    const result = await setup(h, { extensions: { "bad name": { type: "stdio" }, good: { type: "stdio", cmd: "x" } } });
    expect(result.warnings).toEqual([expect.stringMatching(/"bad name" may only contain/)]);
    expect(Object.keys(parse(await readFile(config, "utf8")).extensions)).toEqual(["coder", "developer", "good"]);
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

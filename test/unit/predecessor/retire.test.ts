import { lstat, readdir, readFile, readlink, rename, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { upsertHintsBlock } from "../../../src/goose/goose-config.js";
import { retirePredecessor } from "../../../src/predecessor/retire.js";
import {
  DESKTOP_COMMANDER,
  predecessorConfigYaml,
  README_SYSTEM_PROMPT,
  writePredecessorHome,
} from "../../../support/workspace/predecessor-home.js";
import { modeOf, readText, scratchFolders } from "../scratch.js";

const fresh = scratchFolders("predecessor-step-test");
const NOW = new Date("2026-11-27T05:00:00.000Z");
const TAG = "coder-goose-3x-2026-11-27T05-00-00-000Z";
const TEMPLATE = { provider: "anthropic", model: "claude-3-5-sonnet-latest", additionalExtensions: DESKTOP_COMMANDER };
const NEW_PROMPT = "Report every step to Coder.";

// The start runs under the wrapper's umask 077; the user's files keep their own modes.
let umask = 0;
beforeEach(() => {
  umask = process.umask(0o077);
});
afterEach(() => {
  process.umask(umask);
});

const retire = (home: string, over: Partial<Parameters<typeof retirePredecessor>[0]> = {}) =>
  retirePredecessor({
    home,
    configDir: path.join(home, ".config", "goose"),
    view: { port: 3290, appSlug: "goose", names: ["coder", "developer"] },
    systemPrompt: NEW_PROMPT,
    envSystemPrompt: README_SYSTEM_PROMPT,
    now: NOW,
    ...over,
  });

it("moves 3.x's config.yaml and .goosehints aside, keeping backups with their modes, and names ~/.goose-module", async () => {
  const home = await fresh();
  const files = await writePredecessorHome(home, { ...TEMPLATE, systemPrompt: README_SYSTEM_PROMPT });
  const config = files.configFile;
  const hints = files.hintsFile as string;
  const report = await retire(home);
  expect(report).toEqual({
    lines: [
      `${files.moduleFolder} was left by coder/goose 3.x (its install and start scripts and their logs); nothing reads it any more, so it is safe to delete`,
      `config.yaml: extensions.coder (written by coder/goose 3.x, pointed at :3284, not agentapi_port 3290) moved aside to ${config}.${TAG}`,
      `config.yaml: extensions.developer (written by coder/goose 3.x, the module's config layer gives Goose this entry now) moved aside to ${config}.${TAG}`,
      `config.yaml: extensions.desktop-commander (written by coder/goose 3.x, the template no longer lists it) moved aside to ${config}.${TAG}`,
      "config.yaml: kept its GOOSE_PROVIDER and GOOSE_MODEL lines for a goose run in a terminal; the module's Goose takes goose_provider and goose_model from its environment",
      `.goosehints: the system prompt coder/goose 3.x wrote there is now the module's block alone, so Goose reads it once; the old file is kept at ${hints}.${TAG}`,
    ],
    warnings: [],
  });
  expect(await readText(config)).toBe("GOOSE_PROVIDER: anthropic\nGOOSE_MODEL: claude-3-5-sonnet-latest\n");
  expect(await readText(`${config}.${TAG}`)).toBe(predecessorConfigYaml(TEMPLATE));
  expect(await readText(hints)).toBe(upsertHintsBlock(null, NEW_PROMPT));
  expect(await readText(`${hints}.${TAG}`)).toBe(`${README_SYSTEM_PROMPT}\n`);
  for (const file of [config, `${config}.${TAG}`, hints, `${hints}.${TAG}`]) expect(await modeOf(file)).toBe(0o644);
  expect((await readdir(files.moduleFolder)).sort()).toEqual([
    "agentapi-start.log",
    "install.log",
    "install.sh",
    "scripts",
  ]);

  // The next start finds nothing of 3.x's to move, and says only that the folder may go.
  const again = await retire(home, { now: new Date("2026-11-27T06:00:00.000Z") });
  expect(again).toEqual({ lines: [report.lines[0]], warnings: [] });
  expect((await readdir(path.dirname(config))).sort()).toEqual(
    [".goosehints", `.goosehints.${TAG}`, "config.yaml", `config.yaml.${TAG}`].sort(),
  );
});

it("leaves symlinked files alone, following no link, and says so", async () => {
  const home = await fresh();
  const files = await writePredecessorHome(home, { ...TEMPLATE, systemPrompt: README_SYSTEM_PROMPT });
  const dir = path.dirname(files.configFile);
  for (const name of ["config.yaml", ".goosehints"]) {
    await rename(path.join(dir, name), path.join(home, `dotfiles-${name}`));
    await symlink(path.join(home, `dotfiles-${name}`), path.join(dir, name));
  }
  const report = await retire(home);
  expect(report.warnings).toEqual([
    `${files.configFile} is a symbolic link, so the module did not look for coder/goose 3.x's entries in it. If it holds extensions.coder pointed at :3284 or extensions the template no longer lists, delete those entries: they override the module's.`,
    `${files.hintsFile} is a symbolic link, so the module did not check it for coder/goose 3.x's copy of the system prompt; if it holds one, delete it so Goose reads the system prompt once.`,
  ]);
  expect(await readlink(files.configFile)).toBe(path.join(home, "dotfiles-config.yaml"));
  expect(await readText(path.join(home, "dotfiles-config.yaml"))).toBe(predecessorConfigYaml(TEMPLATE));
  expect(await readText(path.join(home, "dotfiles-.goosehints"))).toBe(`${README_SYSTEM_PROMPT}\n`);
  expect((await readdir(dir)).sort()).toEqual([".goosehints", "config.yaml"]);
});

it("touches a changed config.yaml and other hints not at all, and says what is stale and how to fix it", async () => {
  const home = await fresh();
  const files = await writePredecessorHome(home, { ...TEMPLATE, systemPrompt: "An older prompt." });
  const changed = `${predecessorConfigYaml(TEMPLATE)}GOOSE_TELEMETRY_ENABLED: false\n`;
  await writeFile(files.configFile, changed);
  const report = await retire(home);
  expect(report.warnings).toEqual([
    `${files.configFile}: extensions.coder looks like coder/goose 3.x's (pointed at :3284, not agentapi_port 3290) and wins over the module's config layer (Goose reads config.yaml last); the module left it because the file changed since coder/goose 3.x wrote it. Delete that entry from the file.`,
    `${files.configFile}: extensions.desktop-commander looks like coder/goose 3.x's (the template no longer lists it) and wins over the module's config layer (Goose reads config.yaml last); the module left it because the file changed since coder/goose 3.x wrote it. Delete that entry from the file.`,
    `${files.hintsFile} holds text outside the module's block, which may be coder/goose 3.x's old GOOSE_SYSTEM_PROMPT; the module left it because it differs from the system prompt. If it is the old prompt, delete it so Goose reads one system prompt.`,
  ]);
  expect(await readText(files.configFile)).toBe(changed);
  expect(await readText(files.hintsFile as string)).toBe("An older prompt.\n");
  expect((await readdir(path.dirname(files.configFile))).sort()).toEqual([".goosehints", "config.yaml"]);
});

it("says nothing of a workspace 3.x never ran in, and of a folder holding the user's files", async () => {
  const home = await fresh();
  expect(await retire(home)).toEqual({ lines: [], warnings: [] });
  await expect(lstat(path.join(home, ".config"))).rejects.toThrow(/ENOENT/);

  const files = await writePredecessorHome(home, TEMPLATE);
  await writeFile(path.join(files.moduleFolder, "notes.md"), "mine\n");
  await writeFile(files.configFile, "GOOSE_PROVIDER: openai\n");
  await writeFile(path.join(path.dirname(files.configFile), ".goosehints"), "Use tabs.\n");
  expect(await retire(home)).toEqual({ lines: [], warnings: [] });
  expect(await readFile(files.configFile, "utf8")).toBe("GOOSE_PROVIDER: openai\n");
});

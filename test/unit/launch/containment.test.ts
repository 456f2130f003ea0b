import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ContainmentChanged,
  checkContainment,
  configFiles,
  containmentChanges,
  containmentFiles,
  type EntryReader,
  type Measured,
  measure,
  ROOT_ONLY,
  rootOnly,
  supervisorRefusals,
  wrapperTarget,
} from "../../../src/launch/containment.js";
import { scratchFolders } from "../scratch.js";

const fresh = scratchFolders("containment-test");
const USER = 1000;

describe("wrapperTarget: the program an agent-firewall wrapper execs", () => {
  it.each([
    ['exec agent-firewall "$@"', "/w/agent-firewall"],
    ['exec "${SCRIPT_DIR}/coder-no-caps" boundary "$@"', "/w/coder-no-caps"],
    ['  exec "$SCRIPT_DIR/coder-no-caps" agent-firewall "$@"', "/w/coder-no-caps"],
    ["exec '/opt/boundary/bin/boundary' \"$@\"", "/opt/boundary/bin/boundary"],
    ['exec "$FIREWALL" "$@"', null],
    ['exec `which boundary` "$@"', null],
    ['boundary "$@"', null],
  ])("%s", (line, expected) => {
    const text = `#!/usr/bin/env bash\nset -euo pipefail\n${line}\n`;
    const found = wrapperTarget(text, "/w");
    expect(found === null ? null : found.replace(/^agent-firewall$/, "/w/agent-firewall")).toBe(expected);
  });
});

describe("configFiles: the config files a firewall prefix names", () => {
  it.each([
    [["/w.sh", "--config=/c.yaml", "--"], ["/c.yaml"]],
    [["boundary", "--config", "/c.yaml", "--allow", "x", "--"], ["/c.yaml"]],
    [["boundary", "--", "--config=/not-its-own"], []],
    [["boundary", "--config="], []],
  ])("%j", (prefix, expected) => {
    expect(configFiles(prefix)).toEqual(expected);
  });
});

const m = (role: string, file: string, state: string): Measured => ({ role, path: file, state });

describe("containmentChanges", () => {
  const hash = "a".repeat(64);
  const other = "b".repeat(64);
  it.each([
    ["nothing changed", [m("goose", "/g", hash)], [m("goose", "/g", hash)], []],
    [
      "a new digest",
      [m("the firewall command", "/w", hash)],
      [m("the firewall command", "/w", other)],
      [`the firewall command /w was SHA-256 ${hash} at the start, now SHA-256 ${other}`],
    ],
    [
      "gone",
      [m("goose", "/g", hash)],
      [m("goose", "/g", "missing")],
      [`goose /g was SHA-256 ${hash} at the start, now missing`],
    ],
    ["not measured again", [m("goose", "/g", hash)], [], [`goose /g was SHA-256 ${hash} at the start, now missing`]],
    [
      "root's no more",
      [m("agentapi", "/a", "root")],
      [m("agentapi", "/a", hash)],
      [`agentapi /a was owned by root at the start, now SHA-256 ${hash}`],
    ],
  ])("%s", (_name, before, after, expected) => {
    expect(containmentChanges(before, after)).toEqual(expected);
  });
});

/**
 * A filesystem as lstat sees it: path to [uid, mode, kind], kind "d" folder,
 * "f" file or a link's target.
 */
function entries(table: Record<string, [number, number, string]>): EntryReader {
  const find = (file: string) => {
    const entry = table[file];
    if (entry === undefined) throw Object.assign(new Error(`ENOENT ${file}`), { code: "ENOENT" });
    return entry;
  };
  return {
    lstat: async (file) => {
      const [uid, mode, kind] = find(file);
      return {
        uid,
        mode,
        isDirectory: () => kind === "d",
        isFile: () => kind === "f",
        isSymbolicLink: () => !"df".includes(kind),
      };
    },
    readlink: async (file) => find(file)[2],
  };
}

const SYSTEM: Record<string, [number, number, string]> = {
  "/": [0, 0o755, "d"],
  "/usr": [0, 0o755, "d"],
  "/usr/bin": [0, 0o755, "d"],
  "/usr/bin/boundary": [0, 0o755, "f"],
  "/bin": [0, 0o777, "usr/bin"],
  "/tmp": [0, 0o1777, "d"],
  "/tmp/boundary": [0, 0o755, "f"],
  "/home": [0, 0o755, "d"],
  "/home/coder": [USER, 0o755, "d"],
  "/home/coder/boundary": [0, 0o755, "/usr/bin/boundary"],
  "/home/coder/goose": [USER, 0o755, "f"],
  "/usr/bin/writable": [0, 0o775, "f"],
  "/usr/bin/users": [USER, 0o755, "/usr/bin/boundary"],
  "/usr/bin/loop": [0, 0o777, "/usr/bin/loop"],
};

describe("rootOnly: files nobody but root can change", () => {
  it.each([
    ["root's file in root's folders", "/usr/bin/boundary", USER, true],
    ["the same for root itself, whose files are the workspace user's then", "/usr/bin/boundary", 0, false],
    ["through root's link in root's folder (/bin -> usr/bin)", "/bin/boundary", USER, true],
    ["root's file in a folder anyone can write", "/tmp/boundary", USER, false],
    ["the user's file", "/home/coder/goose", USER, false],
    ["root's link in the user's folder, which the user can replace", "/home/coder/boundary", USER, false],
    ["root's file writable by its group", "/usr/bin/writable", USER, false],
    ["the user's link in root's folder", "/usr/bin/users", USER, false],
    ["a link loop", "/usr/bin/loop", USER, false],
    ["missing", "/usr/bin/none", USER, false],
    ["a folder", "/usr/bin", USER, false],
  ])("%s: %s", async (_name, file, uid, expected) => {
    expect(await rootOnly(file, uid, entries(SYSTEM))).toBe(expected);
  });
});

describe("what a launch depends on, measured and checked", () => {
  it("the wrapper, its config, what it execs, AgentAPI, goose and the runtime; a change stops the launch and names the file", async () => {
    const dir = await fresh();
    const wrapper = path.join(dir, "scripts", "wrapper.sh");
    const config = path.join(dir, "config.yaml");
    await mkdir(path.dirname(wrapper));
    await writeFile(wrapper, '#!/usr/bin/env bash\nexec "${SCRIPT_DIR}/coder-no-caps" boundary "$@"\n', {
      mode: 0o755,
    });
    await writeFile(path.join(dir, "scripts", "coder-no-caps"), "coder", { mode: 0o755 });
    await writeFile(config, "allowlist: []\n");
    for (const name of ["agentapi", "goose", "node"]) await writeFile(path.join(dir, name), name, { mode: 0o755 });
    const files = await containmentFiles({
      prefix: [wrapper, `--config=${config}`, "--"],
      agentapi: path.join(dir, "agentapi"),
      goose: path.join(dir, "goose"),
      runtime: path.join(dir, "node"),
      pathValue: "/usr/bin:/bin",
      pinned: { agentapi: false, goose: false },
    });
    expect(files.map((f) => `${f.role}: ${path.relative(dir, f.path)}`)).toEqual([
      "the firewall command: scripts/wrapper.sh",
      "the firewall's config: config.yaml",
      "the program the firewall wrapper runs: scripts/coder-no-caps",
      "agentapi: agentapi",
      "goose: goose",
      "the runtime: node",
    ]);
    const verified = await measure(files, 0);
    await expect(checkContainment(verified, 0)).resolves.toBeUndefined();
    await writeFile(config, "allowlist: ['*']\n");
    const refused = checkContainment(verified, 0);
    await expect(refused).rejects.toBeInstanceOf(ContainmentChanged);
    await expect(refused).rejects.toThrow(
      new RegExp(`the firewall's config ${config} was SHA-256 [0-9a-f]{64} at the start, now SHA-256 [0-9a-f]{64}`),
    );
  });

  it("without a firewall, only what a pin covers", async () => {
    const base = { prefix: [], agentapi: "/a", goose: "/g", runtime: "/n", pathValue: "" };
    expect(await containmentFiles({ ...base, pinned: { agentapi: false, goose: false } })).toEqual([]);
    expect(await containmentFiles({ ...base, pinned: { agentapi: true, goose: false } })).toEqual([
      { role: "agentapi", path: "/a" },
    ]);
  });
});

describe("supervisorRefusals: what the supervisor runs outside the firewall once Goose has run", () => {
  const SUM = "a".repeat(64);
  const file = (role: string, state: string): Measured => ({ role, path: `/f/${role.replaceAll(" ", "-")}`, state });
  const rootOnlyAll = [
    file("the firewall command", ROOT_ONLY),
    file("the firewall's config", ROOT_ONLY),
    file("goose", ROOT_ONLY),
    file("the runtime", ROOT_ONLY),
  ];
  const withState = (role: string, state: string) => rootOnlyAll.map((m) => (m.role === role ? file(role, state) : m));

  it.each([
    ["every file root's: restarts and autosaves", rootOnlyAll, true, { restart: false, autosave: false }],
    [
      "the wrapper the user's: no restart, autosave",
      withState("the firewall command", SUM),
      true,
      { restart: true, autosave: false },
    ],
    [
      "the config missing: no restart",
      withState("the firewall's config", "missing"),
      true,
      { restart: true, autosave: false },
    ],
    ["the runtime the user's: neither", withState("the runtime", SUM), true, { restart: true, autosave: true }],
    [
      "no firewall, pinned files the user's: both (nothing to escape)",
      [file("goose", SUM)],
      false,
      { restart: false, autosave: false },
    ],
  ])("%s", (_, measured, firewalled, refused) => {
    const said = supervisorRefusals(measured, firewalled);
    expect({ restart: said.restart !== "", autosave: said.autosave !== "" }).toEqual(refused);
  });

  it("the restart's reason starts with the fix and names each file the user can write", () => {
    const said = supervisorRefusals(withState("goose", SUM), true);
    expect(said.restart).toMatch(
      /^Restart the workspace to bring Goose back, and make \/f\/goose root's \(README, AI governance\)/,
    );
    expect(said.restart).not.toContain("/f/the-runtime");
    expect(supervisorRefusals(withState("the runtime", SUM), true).autosave).toContain("the runtime /f/the-runtime");
  });
});

// The JavaScript runtime a workspace offers the module's coder_scripts. The
// wrapper (modules/agentapi/templates/run.sh.tftpl) takes its runtime from
// PATH, so a runtime here is the tail of PATH: either the machine's own
// folders, whatever node they hold, or runtime binaries that tools/setup.sh
// installed (each alone in its folder), followed by the machine's folders with
// every node and bun taken out, so that nothing else can be picked.
import { existsSync } from "node:fs";
import { mkdir, readdir, symlink } from "node:fs/promises";
import path from "node:path";
import { scratchDir } from "./repo.js";

/** The folders a Coder agent's PATH ends with on a typical image. */
const SYSTEM_DIRS = ["/usr/local/bin", "/usr/bin", "/bin"];

/** The names the wrapper looks up, and their aliases. */
const RUNTIME_NAMES = new Set(["node", "nodejs", "bun", "bunx"]);

export interface ScriptRuntime {
  /**
   * The binary the wrapper should pick: WORKSPACE_RUNTIME, or the machine's
   * `node`; null for a PATH whose test says itself what must be picked.
   */
  binary: string | null;
  /** The end of the scripts' PATH, after the workspace's own folders. */
  pathDirs: string[];
}

let withoutRuntimes: Promise<string> | null = null;

/**
 * One folder of symlinks to everything in SYSTEM_DIRS but node and bun (the
 * first of a name wins, as on PATH), made once per process.
 */
function systemWithoutRuntimes(): Promise<string> {
  withoutRuntimes ??= (async () => {
    const dir = path.join(await scratchDir("system-bin"), "bin");
    await mkdir(dir);
    const seen = new Set<string>(RUNTIME_NAMES);
    for (const system of SYSTEM_DIRS) {
      for (const name of await readdir(system).catch(() => [])) {
        if (seen.has(name)) continue;
        seen.add(name);
        await symlink(path.join(system, name), path.join(dir, name));
      }
    }
    return dir;
  })();
  return withoutRuntimes;
}

/**
 * A PATH tail that offers exactly `binaries` (setup installs each alone in
 * its folder: .tools/runtimes/<name>-<version>/bin/), in this order, and
 * otherwise the machine's tools without its node or bun. No binaries: a
 * workspace with no runtime at all.
 */
export async function pathOffering(binaries: string[]): Promise<string[]> {
  for (const binary of binaries) {
    if (!path.isAbsolute(binary) || !existsSync(binary))
      throw new Error(`${binary} is not an installed runtime binary; run tools/setup.sh`);
  }
  return [...binaries.map((binary) => path.dirname(binary)), await systemWithoutRuntimes()];
}

/** The first `name` on `dirs`, as `command -v` finds it. */
function lookup(name: string, dirs: string[]): string | null {
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** The machine's own PATH and the node on it: the primary combination's runtime. */
export function machineRuntime(): ScriptRuntime {
  const machineNode = lookup("node", SYSTEM_DIRS);
  if (!machineNode) throw new Error(`no node in ${SYSTEM_DIRS.join(":")}; set WORKSPACE_RUNTIME to a runtime binary`);
  return { binary: machineNode, pathDirs: SYSTEM_DIRS };
}

/**
 * The runtime the matrix cell asks for: WORKSPACE_RUNTIME (a node or bun
 * binary from .tools/env.sh) alone, or, unset, the machine's.
 */
export async function scriptRuntime(binary = process.env.WORKSPACE_RUNTIME): Promise<ScriptRuntime> {
  return binary ? { binary, pathDirs: await pathOffering([binary]) } : machineRuntime();
}

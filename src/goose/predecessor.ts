import { lstat } from "node:fs/promises";
import path from "node:path";

/**
 * The folder the registry's coder/goose 3.0.1 kept in HOME: its nested
 * coder/agentapi 2.0.0 module ran with module_dir_name ".goose-module"
 * (registry/coder/modules/goose/main.tf at release/coder/goose/v3.0.1,
 * coder/registry).
 */
export const PREDECESSOR_DIR = ".goose-module";

/**
 * Whether coder/goose 3.x ran in this home: ~/.goose-module is a folder
 * holding the start script its agentapi module wrote there
 * (scripts/agentapi-start.sh). None of the three is followed when it is a symlink.
 */
export async function predecessorRan(home: string): Promise<boolean> {
  const dir = path.join(home, PREDECESSOR_DIR);
  const [folder, scripts, script] = await Promise.all(
    [dir, path.join(dir, "scripts"), path.join(dir, "scripts", "agentapi-start.sh")].map((p) =>
      lstat(p).catch(() => null),
    ),
  );
  return folder?.isDirectory() === true && scripts?.isDirectory() === true && script?.isFile() === true;
}

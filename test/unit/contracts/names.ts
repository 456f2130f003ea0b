// How src/ names each file of the contract table (docs/architecture.md).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { type Named, ROOT } from "./writers.js";

const SRC = path.join(ROOT, "src");
const CHAT = "agentapi-state.json";

// What chatFiles (lifecycle/chat-file.ts) and its callers call each file named after the chat.
const AFTER_THE_CHAT: Record<string, RegExp[]> = {
  "<chat>.bak": [/\.backup\b/, /\bbackupFile\b/, /\bstateBackup\b/],
  "<chat>.owner.json": [/\.owner\b/],
  "<chat>.tmp": [/\)\.tmp\b/],
  "<chat>.set-aside-<time>": [/\bsetAside\b/],
};

const literally = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The name a file goes by in code: its last part, up to a <placeholder>. */
function written(file: string): string {
  const last = file.replace(/\/$/, "").split("/").at(-1) ?? file;
  return last.split("<")[0] as string;
}

/** Each key of ModulePaths (settings/config.ts), and each function of src/ that returns a path, by the name in it. */
function accessors(): { name: string; call: boolean; literal: string }[] {
  const found: { name: string; call: boolean; literal: string }[] = [];
  const config = readFileSync(path.join(SRC, "settings", "config.ts"), "utf8");
  const body = config.slice(config.indexOf("function modulePaths"));
  const object = body.slice(0, body.indexOf("\n}\n"));
  for (const m of object.matchAll(/^\s*(?:const )?(\w+)(?::| =) .*"([^"]+)"\)*[,;]$/gm))
    found.push({ name: m[1] as string, call: false, literal: m[2] as string });
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const text = readFileSync(path.join(entry.parentPath, entry.name), "utf8");
    for (const m of text.matchAll(/function (\w+)\([^)]*\): string \{\n\s+return path\.join\([^;]*"([^"]+)"\);\n\}/g))
      found.push({ name: m[1] as string, call: true, literal: m[2] as string });
  }
  return found;
}

export function namesOf(files: string[]): Named[] {
  const known = accessors();
  return files.map((file) => {
    const after = AFTER_THE_CHAT[file];
    if (after) return { file, needles: after, base: CHAT };
    const name = written(file);
    const needles = [new RegExp(`["'\`/]${literally(name)}`)];
    for (const a of known)
      if (a.literal === name) needles.push(new RegExp(`(?<![\\w$])${a.name}${a.call ? "\\(" : "(?![\\w$])"}`));
    return { file, needles };
  });
}

// The folders of src/ are layers (docs/architecture.md, "Layers"): a file
// imports from its own folder and from lower layers only, so each layer can
// be read, tested and changed knowing only what is below it. And the test
// harness sees with its own eyes: nothing in support/ or tools/lifecycle/
// imports src/, so a defect there cannot hide in what a test checks.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const ROOT = path.join(import.meta.dirname, "..", "..");
const SRC = path.join(ROOT, "src");
const IMPORT = /(?:from|import)\s*\(?\s*"(\.[^"]+)"/g;

/** Each .ts file under `dir`, with the relative specifiers it imports. */
function* imports(dir: string): Generator<{ file: string; folder: string; spec: string }> {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = path.join(entry.parentPath, entry.name);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(IMPORT))
      yield { file, folder: entry.parentPath, spec: spec as string };
  }
}

/** Lowest first; folders on one line are one layer and import neither way. */
const LAYERS = [
  ["lib"],
  ["settings"],
  ["agentapi"],
  ["goose", "install"],
  ["predecessor"],
  ["lifecycle"],
  ["launch"],
  ["supervisor"],
  ["install-script", "start", "stop"],
  ["."],
];

const rank = (folder: string) => LAYERS.findIndex((layer) => layer.includes(folder));

/** Each import in src/ that reaches a folder of the same or a higher layer than its own, as "file -> spec". */
function backwardImports(): string[] {
  const found: string[] = [];
  for (const { file, folder, spec } of imports(SRC)) {
    const from = path.relative(SRC, folder) || ".";
    const to = path.relative(SRC, path.dirname(path.resolve(folder, spec))) || ".";
    const [a, b] = [rank(from), rank(to)];
    if (to !== from && (a === -1 || b === -1 || b >= a)) found.push(`${path.relative(SRC, file)} -> ${spec}`);
  }
  return found;
}

it("every import in src/ points down the layers", () => {
  expect(backwardImports()).toEqual([]);
});

it("the harness imports nothing from src/", () => {
  const found: string[] = [];
  for (const dir of ["support", path.join("tools", "lifecycle")])
    for (const { file, folder, spec } of imports(path.join(ROOT, dir)))
      if (!path.relative(SRC, path.resolve(folder, spec)).startsWith(".."))
        found.push(`${path.relative(ROOT, file)} -> ${spec}`);
  expect(found).toEqual([]);
});

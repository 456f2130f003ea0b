// Who writes each file of the module folder, found in src/ rather than taken
// from the docs: every call that creates, writes or replaces a file, followed
// through the functions that pass a path on, and the file it names found by
// how src/ names it (ModulePaths, a function that returns the path, a name
// written out). Removing a file is not writing it.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export const ROOT = path.join(import.meta.dirname, "..", "..", "..");
const SRC = path.join(ROOT, "src");

/** Node's calls that create, write or replace the file at the argument of each index (rename: its target). */
const PRIMITIVES: Record<string, number[]> = {
  writeFile: [0],
  writeFileSync: [0],
  appendFile: [0],
  appendFileSync: [0],
  copyFile: [1],
  cp: [1],
  rename: [1],
  renameSync: [1],
  symlink: [1],
  mkdir: [0],
  mkdirSync: [0],
  mkdtemp: [0],
  truncate: [0],
  createWriteStream: [0],
  open: [0],
  openSync: [0],
};
const OPENS_FOR_WRITING = /O_CREAT|O_WRONLY|O_RDWR|O_TRUNC|O_APPEND|^["'`][wa]/;

/** A file of the contract table, and how the code names it. */
export interface Named {
  file: string;
  needles: RegExp[];
  /** Files this one is named after (the chat for <chat>.bak): when this one is found, they are not. */
  base?: string;
}

interface Fn {
  name: string;
  module: string;
  params: string[][];
  aliases: Map<string, string>;
}

interface Call {
  callee: string;
  args: string[];
  fn: Fn | null;
  module: string;
}

function sourceFiles(ext: string): string[] {
  return readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext) && !e.name.endsWith(".d.ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : bindingNames(e.name)));
}

function fnName(node: ts.Node): string | null {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) return node.name.getText();
  if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isVariableDeclaration(node.parent))
    return node.parent.name.getText();
  return null;
}

/** Every call in src/'s TypeScript, with the named function it is in. */
function tsCalls(): Call[] {
  const calls: Call[] = [];
  for (const file of sourceFiles(".ts")) {
    const module = path.relative(SRC, file);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const top: Fn = { name: "", module, params: [], aliases: new Map() };
    const visit = (node: ts.Node, fn: Fn) => {
      let here = fn;
      const name = fnName(node);
      if (name !== null && ts.isFunctionLike(node)) {
        const params = node.parameters.map((p) => bindingNames(p.name));
        here = { name, module, params, aliases: new Map(fn.aliases) };
      }
      if (ts.isVariableDeclaration(node) && node.initializer && !ts.isArrowFunction(node.initializer))
        for (const alias of bindingNames(node.name)) here.aliases.set(alias, node.initializer.getText());
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression))
        calls.push({ callee: node.expression.text, args: node.arguments.map((a) => a.getText()), fn: here, module });
      ts.forEachChild(node, (child) => visit(child, here));
    };
    visit(source, top);
  }
  return calls;
}

const word = (name: string) => new RegExp(`(?<![.\\w$])${name.replace(/\$/g, "\\$")}(?![\\w$])`, "g");

/** `text` with the function's local names replaced by what they were set to. */
function expand(text: string, fn: Fn | null): string {
  let out = text;
  for (let round = 0; round < 4 && fn; round++)
    for (const [alias, init] of fn.aliases) out = out.replace(word(alias), `(${init})`);
  return out;
}

function named(text: string, files: Named[]): Set<string> {
  const found = new Set(files.filter((f) => f.needles.some((n) => n.test(text))).map((f) => f.file));
  for (const f of files) if (found.has(f.file) && f.base) found.delete(f.base);
  return found;
}

function paramsIn(text: string, fn: Fn | null): number[] {
  if (!fn) return [];
  return fn.params.flatMap((names, i) => (names.some((n) => word(n).test(text)) ? [i] : []));
}

/** The writers of each file, as modules of src/. */
export function tsWriters(files: Named[]): Map<string, Set<string>> {
  const calls = tsCalls();
  const writing = new Map<string, number[]>(Object.entries(PRIMITIVES));
  const writers = new Map<string, Set<string>>();
  const add = (file: string, module: string) => writers.set(file, (writers.get(file) ?? new Set()).add(module));
  for (let changed = true; changed; ) {
    changed = false;
    writers.clear();
    for (const call of calls) {
      const at = writing.get(call.callee);
      if (!at) continue;
      if ((call.callee === "open" || call.callee === "openSync") && !OPENS_FOR_WRITING.test(call.args[1] ?? ""))
        continue;
      // A write through a descriptor writes the file its open named, which is counted there.
      if (/^openSync\(/.test(call.fn?.aliases.get(call.args[0] ?? "") ?? "")) continue;
      for (const i of at) {
        const text = expand(call.args[i] ?? "", call.fn);
        const found = call.module.startsWith("lib/") ? new Set<string>() : named(text, files);
        for (const file of found) add(file, call.module);
        if (found.size > 0 || !call.fn?.name) continue;
        const passed = paramsIn(text, call.fn);
        const known = writing.get(call.fn.name) ?? [];
        const more = passed.filter((p) => !known.includes(p));
        if (more.length > 0 && !PRIMITIVES[call.fn.name]) {
          writing.set(call.fn.name, [...known, ...more]);
          changed = true;
        }
      }
    }
  }
  return writers;
}

/**
 * The supervisor loop's writes (supervisor.sh): each line that redirects
 * output to a file, moves or copies one, or opens one on a descriptor, with
 * its variables read back to the start's inputs (start-supervisor.ts), and a
 * function's positional parameters to what its callers pass.
 */
export function shWriters(files: Named[]): Map<string, Set<string>> {
  const writers = new Map<string, Set<string>>();
  const env = readFileSync(path.join(SRC, "start", "start-supervisor.ts"), "utf8");
  for (const file of sourceFiles(".sh")) {
    const module = path.relative(SRC, file);
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => !/^\s*#/.test(l));
    const vars = new Map<string, string>();
    for (const line of lines) {
      const set = /^(\w+)=(\S+)$/.exec(line.trim());
      if (!set) continue;
      const from = /^\$(GOOSE_MODULE_\w+)$/.exec(set[2] as string);
      const given = from ? new RegExp(`${from[1]}: ([^\\n]+),`).exec(env)?.[1] : undefined;
      vars.set(set[1] as string, given ?? (set[2] as string));
    }
    const resolve = (text: string) => {
      let out = text;
      for (let round = 0; round < 4; round++)
        out = out.replace(/\$\{?(\w+)\}?/g, (all, v: string) => (vars.has(v) ? `(${vars.get(v)})` : all));
      return out;
    };
    const writes = (line: string) =>
      /(?<![0-9&<])>{1,2}\s*(?!&)|\b(mv|cp)\s|\bexec\s+\d>/.test(line.replace(/2>\s*\/dev\/null/g, ""));
    // The functions whose writes name a positional parameter: the parameter, and whether it is a generation (<log>.<n>).
    const fns = new Map<string, { param: number; generation: boolean }[]>();
    let current: string | null = null;
    for (const line of lines) {
      const starts = /^(\w+)\(\) \{/.exec(line);
      if (starts) current = starts[1] as string;
      if (line === "}") current = null;
      if (!writes(line)) continue;
      const text = resolve(line);
      for (const f of named(text, files)) writers.set(f, (writers.get(f) ?? new Set()).add(module));
      if (!current) continue;
      for (const m of line.matchAll(/\$\{?([1-9])\}?(\.)?/g))
        fns.set(current, [...(fns.get(current) ?? []), { param: Number(m[1]), generation: m[2] === "." }]);
    }
    for (const line of lines) {
      const call = /^\s*(\w+)\s+(.*)$/.exec(line);
      const uses = call ? fns.get(call[1] as string) : undefined;
      if (!uses) continue;
      const args = (call?.[2] ?? "").match(/"[^"]*"|\S+/g) ?? [];
      for (const use of uses)
        for (const f of named(resolve(args[use.param - 1] ?? ""), files)) {
          const written = use.generation ? `${f}.<n>` : f;
          writers.set(written, (writers.get(written) ?? new Set()).add(module));
        }
    }
  }
  return writers;
}

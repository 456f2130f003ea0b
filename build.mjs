// Bundles src/install.ts, src/start.ts and src/stop.ts into self-contained
// scripts under scripts/, which the Terraform module embeds. Output is
// deterministic so CI can rebuild and diff it.
//
// The bundles are fully minified, for the coder_scripts' size
// (docs/development.md, "The registry pull request", has the figures). They
// also travel in the coder/registry pull request (npm run registry-pr), whose
// CI runs typos and prettier --check over every file:
// - esbuild makes no name that typos could read as a word (`reserved`, below);
// - the code is one IIFE behind a `// prettier-ignore` comment, so prettier
//   checks only the header lines, which are written in its style.

import { readFileSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

// Each bundle is a classic script, not an ES module: the coder_script's
// loader (modules/agentapi/templates/run.sh.tftpl) runs it with
// vm.runInThisContext, where the runtime's require loads Node.js's modules.
const header = `// Built by build.mjs from src/ (src/README.md says how to rebuild it).
// prettier-ignore
`;

// The supervisor's sh source (start/start-supervisor.ts), as text without its
// comment lines and indentation (sh reads past it; the file has no
// here-document): they would only grow the coder_script and the command line.
const shText = {
  name: "sh-text",
  setup(b) {
    b.onLoad({ filter: /\.sh$/ }, ({ path }) => ({
      contents: readFileSync(path, "utf8")
        .replace(/^\s*#.*\n/gm, "")
        .replace(/^[ \t]+/gm, ""),
      loader: "text",
    }));
  },
};

// The registry's typos reads an identifier as words, split where a small letter
// meets a capital, and flags some two-letter words: esbuild's minified names
// were 49 findings. So esbuild must make no two-letter name that reads as one
// word (two small letters, two capitals, a capital then a small letter). What
// it has left (a small letter then a capital, a letter then a digit, _ or $)
// reads as single letters, which typos never flags, whatever its dictionary:
// 1,482 names of one or two characters before esbuild makes longer ones
// (start.mjs uses about 900). Should typos flag a name in scripts/*.mjs anyway
// (npm run registry-pr says so), reserve names of its shape here too (the word
// itself written here would be a finding of its own). The keywords among them
// are left out: esbuild never makes those, and code cannot refer to them.
const small = "abcdefghijklmnopqrstuvwxyz";
const capital = small.toUpperCase();
const reserved = [];
for (const first of small + capital)
  for (const second of first === first.toUpperCase() ? small + capital : small)
    if (!["do", "if", "in"].includes(first + second)) reserved.push(first + second);

// A classic script has no module loader behind import(), so a Node.js module
// the code loads when it first needs it (import("node:http")) becomes a
// require made at that moment: a module of one line that esbuild wraps to run
// on first use.
const lazyBuiltins = {
  name: "lazy-builtins",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === "dynamic-import" ? { path: args.path, namespace: "lazy-builtin" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};

for (const name of ["install", "start", "stop"]) {
  const outfile = `scripts/${name}.cjs`;
  const result = await build({
    // esbuild never gives a minified name to a global the bundled code refers
    // to (github.com/evanw/esbuild, internal/renamer/renamer.go,
    // ComputeReservedNames, at v0.28.2), and a reference in a branch it drops
    // counts too: so the entry is a module that imports the real one and
    // refers to the reserved names under `if (false)`, which it drops.
    stdin: {
      contents: `import "./src/${name}.ts";\nif (false) {\n${reserved.join(";\n")};\n}\n`,
      resolveDir: ".",
      sourcefile: `${name}-entry.ts`,
      loader: "ts",
    },
    outfile,
    write: false,
    bundle: true,
    platform: "node",
    format: "iife",
    target: "node18",
    minify: true,
    legalComments: "none",
    plugins: [shText, lazyBuiltins],
    logLevel: "warning",
  });
  // Strict, as the code ran when it was an ES module: the directive goes
  // inside the IIFE, which stays the one statement after prettier-ignore.
  const text = result.outputFiles[0].text;
  if (/\bimport\(/.test(text)) throw new Error(`${outfile}: an import() is left, which a classic script cannot run`);
  const open = "(()=>{";
  if (!text.startsWith(open)) throw new Error(`${outfile}: esbuild's IIFE no longer opens with ${open}`);
  const body = `${open}"use strict";${text.slice(open.length)}`;
  writeFileSync(outfile, header + body);
  console.log(`build: ${outfile} ${Buffer.byteLength(header + body)} bytes`);
}

// Bundles src/start.ts and src/shutdown.ts into self-contained ES modules under
// scripts/, which the Terraform module embeds. Output is deterministic so CI
// can rebuild and diff it.
//
// The bundles also travel in the coder/registry pull request (npm run
// registry-pr), whose CI runs typos and prettier --check over every file:
// - identifiers keep their source names (minifyIdentifiers: false), since
//   esbuild's two-letter names read as misspellings to typos; whitespace and
//   syntax are still minified, for the coder_script's size (docs/development.md,
//   "The registry pull request", has the figures);
// - the code is one IIFE behind a `// prettier-ignore` comment, so prettier
//   checks only the header lines, which are written in its style.

import { readFileSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

// zx is CommonJS that calls require("node:...") at run time, which an ES
// module has no require for ("Dynamic require of ... is not supported").
const header = `import { createRequire as __cr } from "node:module";
const require = __cr(import.meta.url);
// Built by build.mjs from src/ (src/README.md says how to rebuild it).
// prettier-ignore
`;

// The supervisor's sh source (start/start-supervisor.ts), as text without its
// comment lines: they would only grow the coder_script and the command line.
const shText = {
  name: "sh-text",
  setup(b) {
    b.onLoad({ filter: /\.sh$/ }, ({ path }) => ({
      contents: readFileSync(path, "utf8").replace(/^\s*#.*\n/gm, ""),
      loader: "text",
    }));
  },
};

for (const name of ["start", "shutdown"]) {
  const outfile = `scripts/${name}.mjs`;
  const result = await build({
    entryPoints: [`src/${name}.ts`],
    outfile,
    write: false,
    bundle: true,
    platform: "node",
    format: "iife",
    target: "node18",
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: false,
    legalComments: "none",
    // Unminified, esbuild keys each bundled CommonJS module by its path from the
    // working folder: node_modules/<package>/… as long as a symlinked node_modules
    // (a git worktree's) is not resolved to where it really is.
    preserveSymlinks: true,
    plugins: [shText],
    logLevel: "warning",
  });
  // esbuild opens an IIFE built from ES modules with "use strict"; the bundle
  // runs as an ES module (node --input-type=module), which is strict already.
  const body = result.outputFiles[0].text.replace(/^"use strict";/, "");
  writeFileSync(outfile, header + body);
  console.log(`build: ${outfile} ${Buffer.byteLength(header + body)} bytes`);
}

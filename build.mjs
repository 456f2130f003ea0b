// Bundles src/start.ts and src/shutdown.ts into self-contained ES modules under
// scripts/, which the Terraform module embeds. Output is deterministic so CI
// can rebuild and diff it.

import { readFileSync, statSync } from "node:fs";
import { build } from "esbuild";

// zx is CommonJS that calls require("node:...") at run time, which an ES
// module bundle has no require for ("Dynamic require of ... is not supported").
const banner = "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);";

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
  await build({
    entryPoints: [`src/${name}.ts`],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node18",
    minify: true,
    keepNames: true,
    legalComments: "none",
    plugins: [shText],
    banner: { js: banner },
    logLevel: "warning",
  });
  console.log(`build: ${outfile} ${statSync(outfile).size} bytes`);
}

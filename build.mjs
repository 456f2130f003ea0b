// Bundles src/start.ts and src/shutdown.ts into self-contained ES modules under
// scripts/, which the Terraform module embeds. Output is deterministic so CI
// can rebuild and diff it.

import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

// yaml's Node entry is CommonJS, which esbuild cannot tree-shake and which
// calls require() at run time; its ES module build ("default" in its exports
// map, the same code) keeps the start bundle about 15 KB smaller after gzip.
const yamlEsm = fileURLToPath(new URL("./node_modules/yaml/browser/index.js", import.meta.url));

// zx is CommonJS that calls require("node:...") at run time, which an ES
// module bundle has no require for ("Dynamic require of ... is not supported").
const banner = "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);";

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
    alias: { yaml: yamlEsm },
    banner: { js: banner },
    logLevel: "warning",
  });
  console.log(`build: ${outfile} ${statSync(outfile).size} bytes`);
}

import { build } from "esbuild";
import { gzipSync } from "node:zlib";
const banner = "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);";
for (const [label, extra] of [["with yaml", {}], ["yaml stubbed", { yaml: "/tmp/zx-yaml-stub.mjs" }]]) {
  const r = await build({ entryPoints: ["src/start.ts"], write: false, outfile: "x.mjs", bundle: true, platform: "node", format: "esm", target: "node18", minify: true, keepNames: true, legalComments: "none", alias: { yaml: new URL("./node_modules/yaml/browser/index.js", import.meta.url).pathname, ...extra }, banner: { js: banner }, metafile: true, logLevel: "error" });
  const out = Object.values(r.metafile.outputs)[0];
  const by = {};
  for (const [f, v] of Object.entries(out.inputs)) { const k = f.includes("node_modules") ? f.split("node_modules/")[1].split("/")[0] : "src"; by[k] = (by[k] ?? 0) + v.bytesInOutput; }
  const buf = r.outputFiles[0].contents;
  console.log(label, by, "raw", buf.length, "gz", gzipSync(buf, { level: 9 }).length, "gzb64", Math.ceil(gzipSync(buf, { level: 9 }).length / 3) * 4);
}

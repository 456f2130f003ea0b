// What every workspace build carries: the bundles, and each coder_script as
// Terraform renders it (one argv string, so Linux's MAX_ARG_STRLEN of 128 KiB
// is the hard limit; test/integration/bootstrap.test.ts holds each under
// 64 KiB, half of it, for what the settings and the next features add).
// Coder stores the scripts with every build, so the stop's goal is tighter:
// at most 16 KiB. Sizes, not times: one run is exact.
import { statSync } from "node:fs";
import { benchWorkspace } from "./bench-workspace.js";

const KIB = 1024;
const bytesOf = (name: string, bytes: number) => `${name.padEnd(50)} ${String(bytes).padStart(8)} B`;
const row = (name: string, bytes: number, goal?: number) =>
  `${bytesOf(name, bytes)} (${((bytes / (128 * KIB)) * 100).toFixed(0)}% of 128 KiB)${goal ? `, goal ≤ ${goal / KIB} KiB: ${bytes <= goal ? "met" : "NOT met"}` : ""}`;

export async function benchSizes(): Promise<void> {
  for (const name of ["install", "start", "stop"])
    console.log(
      `${bytesOf(`bundle scripts/${name}.cjs`, statSync(`scripts/${name}.cjs`).size)} (embedded gzip+base64)`,
    );
  const b = await benchWorkspace();
  try {
    console.log(row("rendered install coder_script", Buffer.byteLength(b.rendered.install), 64 * KIB));
    console.log(row("rendered start coder_script", Buffer.byteLength(b.rendered.start), 64 * KIB));
    console.log(row("rendered stop coder_script", Buffer.byteLength(b.rendered.stop), 16 * KIB));
  } finally {
    await b.close();
  }
}

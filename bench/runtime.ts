// Where a script's fixed cost goes, in fresh processes, alternating: Node
// itself, loading each bundle, the coder_script's sh wrapper, and one request
// made with fetch against one made with node:http (why the scripts use the
// latter). The bundles are loaded without settings, so they stop right after
// loading; the wrapper is timed on a stop with nothing to stop, against the
// same bundle and settings handed to Node directly. The Node.js is the one the
// workspace's scripts get (WORKSPACE_RUNTIME, else the machine's).
import path from "node:path";
import { CoderEndpoint, run } from "../support/workspace/index.js";
import { benchWorkspace } from "./bench-workspace.js";
import { figure, median } from "./stats.js";

/**
 * The bundle and settings a rendered coder_script carries, each gzip+base64
 * in one variable of the wrapper, and the loader it gives the runtime
 * (modules/agentapi/templates/run.sh.tftpl).
 */
function unpack(script: string): { bundle: string; settings: string; loader: string } {
  const bundle = /^CODER_MODULE_SCRIPT='([A-Za-z0-9+/=]+)'$/m.exec(script)?.[1];
  const settings = /^CODER_MODULE_SETTINGS='([A-Za-z0-9+/=]+)'$/m.exec(script)?.[1];
  const loader = /^LOADER='([^']+)'$/m.exec(script)?.[1];
  if (!bundle || !settings || !loader)
    throw new Error("the coder_script does not carry a bundle, settings and a loader as expected");
  return { bundle, settings, loader };
}

export async function benchRuntime(runs: number): Promise<void> {
  const b = await benchWorkspace();
  const endpoint = await CoderEndpoint.start(204);
  const results = new Map<string, number[]>();
  try {
    const { rendered, ws } = b;
    const binary = ws.runtime.binary ?? "node";
    if (!/node[^/]*$/.test(path.basename(binary))) {
      console.log(`runtime: measures Node.js; this workspace's runtime is ${binary}`);
      return;
    }
    const stop = unpack(rendered.stop);
    const install = unpack(rendered.install);
    const start = unpack(rendered.start);
    const env = ws.env();
    const node = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
      run(binary, args, { cwd: ws.home, env: { ...env, ...extra } });
    // As the wrapper runs a bundle; without settings it stops once loaded.
    const load = (script: ReturnType<typeof unpack>, extra: NodeJS.ProcessEnv = {}) =>
      node(["-e", script.loader], { CODER_MODULE_SCRIPT: script.bundle, ...extra });
    const url = `${endpoint.url}/ping`;
    const cases: Record<string, () => Promise<unknown>> = {
      "node -e 0": () => node(["-e", "0"]),
      "node loading stop.cjs (loader)": () => load(stop),
      "node loading install.cjs (loader)": () => load(install),
      "node loading start.cjs (loader)": () => load(start),
      "stop coder_script, nothing to stop (sh -c)": () => ws.runScript(rendered.stop),
      "the same bundle and settings, node directly": () => load(stop, { CODER_MODULE_SETTINGS: stop.settings }),
      "node: one POST with fetch": () =>
        node(["-e", `fetch(${JSON.stringify(url)}, { method: "POST" }).then(() => process.exit(0))`]),
      "node: one POST with node:http": () =>
        node([
          "-e",
          `require("node:http").request(${JSON.stringify(url)}, { method: "POST" }, (r) => { r.resume(); r.on("end", () => process.exit(0)); }).end()`,
        ]),
    };
    console.log(`runtime: ${runs} run(s) of each, alternating; Node ${(await node(["--version"])).stdout.trim()}`);
    for (let i = 0; i < runs; i++) {
      for (const [name, step] of Object.entries(cases)) {
        const started = performance.now();
        await step();
        results.set(name, [...(results.get(name) ?? []), Math.round((performance.now() - started) * 10) / 10]);
      }
    }
  } finally {
    await endpoint.close();
    await b.close();
  }
  if (results.size === 0) return;
  for (const [name, values] of results) console.log(figure(name, values));
  const m = (name: string) => median(results.get(name) as number[]);
  console.log(
    `the sh wrapper costs ${(m("stop coder_script, nothing to stop (sh -c)") - m("the same bundle and settings, node directly")).toFixed(1)} ms; loading stop.cjs ${(m("node loading stop.cjs (loader)") - m("node -e 0")).toFixed(1)} ms, install.cjs ${(m("node loading install.cjs (loader)") - m("node -e 0")).toFixed(1)} ms and start.cjs ${(m("node loading start.cjs (loader)") - m("node -e 0")).toFixed(1)} ms over node -e 0; the first fetch ${(m("node: one POST with fetch") - m("node: one POST with node:http")).toFixed(1)} ms more than node:http`,
  );
}

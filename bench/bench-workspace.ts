// One throwaway task workspace per benchmark (the Goose double, or a real Goose
// with GOOSE_BIN): the module rendered for it with the real coder provider, a
// stand-in for the Coder deployment that receives task log snapshots, and the
// checks every timed run makes before it counts.
import { randomUUID } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { CoderEndpoint, type Rendered, type RunResult, renderModule, Workspace } from "../support/workspace/index.js";

export interface BenchWorkspace {
  ws: Workspace;
  coder: CoderEndpoint;
  rendered: Rendered;
  taskId: string;
  close(): Promise<void>;
}

/** `vars` are added to the module's variables. */
export async function benchWorkspace(vars: Record<string, unknown> = {}): Promise<BenchWorkspace> {
  const coder = await CoderEndpoint.start();
  const ws = await Workspace.create();
  ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: coder.token });
  const taskId = randomUUID();
  // With GOOSE_BIN, a real Goose and its model stub: the provider and model become the stub's.
  const rendered = await renderModule(
    ws.goose.vars({
      agent_id: "bench",
      folder: path.join(ws.home, "project"),
      goose_provider: "anthropic",
      goose_model: "claude-sonnet-4-5",
      task: { enabled: true, id: taskId, prompt: "Summarise this project in one sentence." },
      install_goose: false,
      install_agentapi: false,
      agentapi_port: ws.port,
      ...vars,
    }),
    { CODER_WORKSPACE_ID: randomUUID(), CODER_AGENT_URL: `${coder.url}/` },
  );
  return {
    ws,
    coder,
    rendered,
    taskId,
    async close() {
      await ws.cleanup();
      await coder.close();
      await rm(ws.home, { recursive: true, force: true });
    },
  };
}

export function expectExit0(result: RunResult, what: string): RunResult {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Runs the start coder_script and waits until Goose is at its prompt. */
export async function startSettled(b: BenchWorkspace): Promise<RunResult> {
  const result = expectExit0(await b.ws.runStart(b.rendered), "start script");
  await b.ws.waitStable();
  return result;
}

/** Runs the stop coder_script and waits until nothing of the workspace runs any more. */
export async function stopAll(b: BenchWorkspace): Promise<RunResult> {
  const result = expectExit0(await b.ws.runScript(b.rendered.stop), "stop script");
  await b.ws.waitFor("every process of the workspace gone", async () => (await b.ws.processes()).length === 0, 10_000);
  return result;
}

/** Empties the workspace's HOME: no module files, no Goose config or sessions, as on a workspace's first start. */
export async function wipeHome(b: BenchWorkspace): Promise<void> {
  for (const entry of await readdir(b.ws.home)) await rm(path.join(b.ws.home, entry), { recursive: true, force: true });
}

/** `phase <name>: <ms> ms` lines of a script's output. */
export function phases(output: string): Array<{ name: string; ms: number }> {
  return [...output.matchAll(/^goose-module: phase (\S+): (\d+) ms$/gm)].map((m) => ({
    name: m[1] as string,
    ms: Number(m[2]),
  }));
}

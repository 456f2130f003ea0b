// Start timing, everything installed, against real AgentAPI and the Goose test
// double, alternating in one run:
// - our rendered start coder_script (`sh -c`, as the Coder agent runs it);
// - the floor: AgentAPI started directly from this process with the command
//   line, environment and folder our start used last (read from /proc), so
//   Goose gets the same arguments and the same files.
// Both are timed from the moment they are started until AgentAPI's /status
// says "stable" (asked every 10 ms from here, the same way for both: more
// often would take CPU from the Goose being timed); for
// ours, also until the script exits. Warm: Goose resumes a session and
// AgentAPI loads a saved chat. Cold: an empty HOME, as on a workspace's first
// start, where Goose gets the task prompt.
import { spawn } from "node:child_process";
import { mkdir, open, readFile, readlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { readCmdline } from "../support/workspace/index.js";
import { type BenchWorkspace, benchWorkspace, phases, startSettled, stopAll, wipeHome } from "./bench-workspace.js";
import { figure, median } from "./stats.js";

// Goal: warm and cold starts to "stable" within 100 ms of AgentAPI started directly.
const GOAL_OVER_FLOOR_MS = 100;
const POLL_MS = 10;

/** How AgentAPI was started: its argv, environment and folder. */
interface Launch {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** Files Goose reads that our start wrote (its config, the prompt file), to give the floor the same inputs. */
  files: Map<string, Buffer>;
}

async function captureLaunch(b: BenchWorkspace): Promise<Launch> {
  const pid = Number((await b.ws.readModuleFile("agentapi.pid"))?.trim());
  const argv = await readCmdline(pid);
  if (!argv) throw new Error(`AgentAPI (PID ${pid}) is not running`);
  const environ = await readFile(`/proc/${pid}/environ`, "utf8");
  const env = Object.fromEntries(
    environ
      .split("\0")
      .filter((entry) => entry.includes("="))
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  );
  const files = new Map<string, Buffer>();
  const configDir = path.join(b.ws.home, ".config", "goose");
  for (const name of [".goosehints"]) {
    const file = path.join(configDir, name);
    const text = await readFile(file).catch(() => null);
    if (text) files.set(file, text);
  }
  // The module's config layer, which the environment names.
  for (const file of (env.GOOSE_ADDITIONAL_CONFIG_FILES ?? "").split(":").filter(Boolean)) {
    const text = await readFile(file).catch(() => null);
    if (text) files.set(file, text);
  }
  const instructions = argv.indexOf("--instructions");
  if (instructions !== -1) {
    const file = argv[instructions + 1] as string;
    files.set(file, await readFile(file));
  }
  return { argv, env, cwd: await readlink(`/proc/${pid}/cwd`), files };
}

async function launchDirectly(b: BenchWorkspace, launch: Launch): Promise<void> {
  const logFile = path.join(b.ws.moduleDir, "logs", "agentapi.log");
  await mkdir(path.dirname(logFile), { recursive: true, mode: 0o700 });
  await mkdir(launch.cwd, { recursive: true });
  // AgentAPI's own TMPDIR is the module's tmp/ folder, which the start creates and a cold run wipes.
  if (launch.env.TMPDIR) await mkdir(launch.env.TMPDIR, { recursive: true, mode: 0o700 });
  for (const [file, content] of launch.files) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content, { mode: 0o600 });
  }
  const out = await open(logFile, "a");
  try {
    const child = spawn(launch.argv[0] as string, launch.argv.slice(1), {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ["ignore", out.fd, out.fd],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    child.unref();
  } finally {
    await out.close();
  }
}

/** Starts something and times it to AgentAPI's first "stable" answer, and to its own end. */
async function toStable(
  b: BenchWorkspace,
  begin: () => Promise<unknown>,
): Promise<{ stable: number; done: number; result: unknown }> {
  await b.ws.status(); // the first request in this process pays for loading its HTTP client; not in the timing
  const started = performance.now();
  let done = -1;
  const running = begin().then((result) => {
    done = performance.now() - started;
    return result;
  });
  let stable = -1;
  while (stable < 0) {
    if ((await b.ws.status()) === "stable") stable = performance.now() - started;
    else if (performance.now() - started > 60_000) throw new Error("AgentAPI was not stable within 60 s");
    else await delay(POLL_MS);
  }
  const result = await running;
  return { stable: Math.round(stable), done: Math.round(done), result };
}

type Kind = "warm" | "cold";

async function benchKind(kind: Kind, runs: number): Promise<void> {
  const b = await benchWorkspace();
  const ours: number[] = [];
  const oursExit: number[] = [];
  const floor: number[] = [];
  const ourPhases = new Map<string, number[]>();
  try {
    // A start to learn the command line from; for warm, a conversation to resume.
    await startSettled(b);
    if (kind === "warm") await b.ws.send("bench: a message to resume");
    let launch = await captureLaunch(b);
    await stopAll(b);
    for (let i = 0; i < runs; i++) {
      for (const variant of i % 2 ? (["floor", "ours"] as const) : (["ours", "floor"] as const)) {
        if (kind === "cold") await wipeHome(b);
        if (variant === "ours") {
          const t = await toStable(b, () => b.ws.runScript(b.rendered.start));
          const run = t.result as Awaited<ReturnType<typeof b.ws.runScript>>;
          if (run.code !== 0) throw new Error(`start script exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
          ours.push(t.stable);
          oursExit.push(t.done);
          for (const p of phases(run.stdout)) ourPhases.set(p.name, [...(ourPhases.get(p.name) ?? []), p.ms]);
          launch = await captureLaunch(b);
        } else {
          floor.push((await toStable(b, () => launchDirectly(b, launch))).stable);
        }
        await b.ws.waitStable();
        await stopAll(b);
      }
    }
  } finally {
    await b.close();
  }
  console.log(figure(`${kind} start, ours: to "stable"`, ours));
  console.log(figure(`${kind} start, ours: until the script exits`, oursExit));
  for (const [name, values] of ourPhases) console.log(figure(`  inside it, phase ${name}`, values));
  console.log(figure(`${kind} start, floor: AgentAPI directly, to "stable"`, floor));
  const over = median(ours) - median(floor);
  console.log(
    `${over <= GOAL_OVER_FLOOR_MS ? "GOAL MET" : "GOAL MISSED"}: ${kind} start is ${Math.round(over)} ms over the floor (goal <= ${GOAL_OVER_FLOOR_MS} ms); ours / floor ${(median(ours) / median(floor)).toFixed(2)}x`,
  );
}

export async function benchStart(runs: number): Promise<void> {
  console.log(`start: everything installed, ${runs} run(s) per variant, warm then cold`);
  await benchKind("warm", runs);
  await benchKind("cold", runs);
}

// Start timing, everything installed, against real AgentAPI and the Goose
// under test (the double, or a real Goose with GOOSE_BIN), interleaved in one
// run, the order rotating each round:
// - our rendered start coder_script (`sh -c`, as the Coder agent runs it);
// - the registry agentapi module's start sequence (registrySequence, below)
//   around the same AgentAPI command line;
// - the floor: AgentAPI started directly from this process with the command
//   line, environment and folder our start used last (read from /proc), so
//   Goose gets the same arguments and the same files.
// Each is timed from the moment it is started until AgentAPI's /status says
// "stable" (asked every 10 ms from here, the same way for all: more often
// would take CPU from the Goose being timed); the two scripts also until they
// exit. Warm: Goose resumes a session and AgentAPI loads a saved chat, twice:
// with AgentAPI and Goose found on PATH (install_agentapi and install_goose
// off), and with the module's defaults (both on) where both are already
// installed, so each start asks both for their `--version`. Cold: an empty
// HOME, as on a workspace's first start, where Goose gets the task prompt.
import { spawn } from "node:child_process";
import { chmod, copyFile, mkdir, open, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { gooseUnderTest, readCmdline, run, tools } from "../support/workspace/index.js";
import { type BenchWorkspace, benchWorkspace, phases, startSettled, stopAll, wipeHome } from "./bench-workspace.js";
import { figure, loadLine, median } from "./stats.js";

// Goals, each against AgentAPI started directly in the same run: a warm start
// to "stable" within 100 ms of it, a cold one within 150 ms.
const GOAL_OVER_FLOOR_MS: Record<"warm" | "cold", number> = { warm: 100, cold: 150 };
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

/** POSIX single quotes, for the bench's own generated shell text. */
function q(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The registry agentapi module's start sequence, written from its description
 * (registry/coder/modules/agentapi/main.tf, coder_script "agentapi", and
 * scripts/main.sh, lib.sh, agentapi-wait-for-start.sh in coder/registry at
 * 6be121e4; registry/coder/modules/goose/scripts/install.sh and start.sh for
 * the agent's part), around the same AgentAPI command line as the floor:
 * - the coder_script (bash, errexit and pipefail) decodes its three scripts
 *   from base64 into files (the registry writes them to /tmp; here a folder of
 *   this workspace, so benches side by side share nothing) and runs main.sh
 *   with its settings in ARG_* variables;
 * - main.sh (bash, errexit, xtrace) makes the module folder, checks for jq,
 *   the folder, writes the install script and runs it through tee (Goose's,
 *   with install off and no config to write: the bench's Goose is installed
 *   and configured), checks for agentapi, writes the start and wait scripts,
 *   asks `agentapi --version` for the persistence gate, starts the start
 *   script with nohup in the background, then runs the wait script;
 * - the start script runs AgentAPI with the floor's command line, environment
 *   and folder (Goose's start.sh would run another command line);
 * - the wait script polls /status with curl every 0.1 s until it has three
 *   answers in a row.
 */
function registrySequence(dir: string, launch: Launch, port: number): string {
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  const start = `#!/bin/bash
cd ${q(launch.cwd)}
exec env -i ${Object.entries(launch.env)
    .map(([k, v]) => q(`${k}=${v}`))
    .join(" ")} ${launch.argv.map(q).join(" ")}
`;
  const wait = `#!/bin/bash
set -o errexit
set -o pipefail
port=\${1:-3284}
ok=false
echo "Waiting for agentapi server to start on port $port..."
for i in $(seq 1 150); do
  for j in $(seq 1 3); do
    sleep 0.1
    if curl -fs -o /dev/null "http://localhost:$port/status"; then
      echo "agentapi response received ($j/3)"
    else
      echo "agentapi server not responding ($i/150)"
      continue 2
    fi
  done
  ok=true
  break
done
[ "$ok" = true ] || { echo "agentapi server did not start on port $port"; exit 1; }
echo "agentapi server started on port $port."
`;
  const install = `#!/bin/bash
command_exists() { command -v "$1" > /dev/null 2>&1; }
set -o nounset
echo "--------------------------------"
echo "install: $ARG_INSTALL"
echo "--------------------------------"
set +o nounset
if [ "$ARG_INSTALL" = "true" ]; then exit 1; else echo "Skipping Goose installation"; fi
echo "Skipping Goose configuration"
if command_exists goose; then GOOSE_CMD=goose; else echo "Error: Goose is not installed."; exit 1; fi
`;
  const lib = `#!/usr/bin/env bash
version_at_least() {
  local min="\${1#v}" actual="\${2#v}"
  [[ $actual =~ ^([0-9]+).([0-9]+).([0-9]+)$ ]] || return 0
  local a1="\${BASH_REMATCH[1]}" a2="\${BASH_REMATCH[2]}" a3="\${BASH_REMATCH[3]}"
  [[ $min =~ ^([0-9]+).([0-9]+).([0-9]+)$ ]] || return 0
  local m1="\${BASH_REMATCH[1]}" m2="\${BASH_REMATCH[2]}" m3="\${BASH_REMATCH[3]}"
  if ((a1 != m1)); then ((a1 > m1)); return; fi
  if ((a2 != m2)); then ((a2 > m2)); return; fi
  ((a3 >= m3))
}
agentapi_version() { agentapi --version 2> /dev/null | awk '{print $NF}'; }
`;
  const main = `#!/bin/bash
set -e
set -x
set -o nounset
MODULE_DIR_NAME="$ARG_MODULE_DIR_NAME"
WORKDIR="$ARG_WORKDIR"
INSTALL_SCRIPT="$ARG_INSTALL_SCRIPT"
START_SCRIPT="$ARG_START_SCRIPT"
WAIT_FOR_START_SCRIPT="$ARG_WAIT_FOR_START_SCRIPT"
AGENTAPI_PORT="$ARG_AGENTAPI_PORT"
TASK_ID="\${ARG_TASK_ID:-}"
ENABLE_STATE_PERSISTENCE="\${ARG_ENABLE_STATE_PERSISTENCE:-false}"
set +o nounset
source "$ARG_LIB"
command_exists() { command -v "$1" > /dev/null 2>&1; }
module_path="$HOME/\${MODULE_DIR_NAME}"
mkdir -p "$module_path/scripts"
if [[ -n $TASK_ID ]] && ! command_exists jq; then echo "Warning: jq is not installed."; fi
if [ ! -d "\${WORKDIR}" ]; then mkdir -p "\${WORKDIR}"; fi
echo "Running install script..."
echo -n "\${INSTALL_SCRIPT}" > "$module_path/install.sh"
chmod +x "$module_path/install.sh"
"$module_path/install.sh" 2>&1 | tee "$module_path/install.log"
if ! command_exists agentapi; then echo "Error: AgentAPI is not installed."; exit 1; fi
echo -n "\${START_SCRIPT}" > "$module_path/scripts/agentapi-start.sh"
echo -n "\${WAIT_FOR_START_SCRIPT}" > "$module_path/scripts/agentapi-wait-for-start.sh"
chmod +x "$module_path/scripts/agentapi-start.sh"
chmod +x "$module_path/scripts/agentapi-wait-for-start.sh"
export LANG=en_US.UTF-8
export LC_ALL=en_US.UTF-8
cd "\${WORKDIR}"
export AGENTAPI_ALLOWED_HOSTS="*"
export AGENTAPI_PID_FILE="$module_path/agentapi.pid"
if [ "\${ENABLE_STATE_PERSISTENCE}" = "true" ]; then
  actual_version=$(agentapi_version)
  if version_at_least 0.12.0 "$actual_version"; then
    export AGENTAPI_SAVE_STATE="true" AGENTAPI_LOAD_STATE="true"
  fi
fi
nohup "$module_path/scripts/agentapi-start.sh" true "\${AGENTAPI_PORT}" &> "$module_path/agentapi-start.log" &
"$module_path/scripts/agentapi-wait-for-start.sh" "\${AGENTAPI_PORT}"
`;
  const files = path.join(dir, "registry-scripts");
  return `#!/bin/bash
set -o errexit
set -o pipefail
mkdir -p ${q(files)}
echo -n '${b64(main)}' | base64 -d > ${q(`${files}/main.sh`)}
chmod +x ${q(`${files}/main.sh`)}
echo -n '${b64(lib)}' | base64 -d > ${q(`${files}/agentapi-lib.sh`)}
ARG_MODULE_DIR_NAME='.registry-agentapi-bench' \
ARG_WORKDIR="$(echo -n '${b64(launch.cwd)}' | base64 -d)" \
ARG_INSTALL_SCRIPT="$(echo -n '${b64(install)}' | base64 -d)" \
ARG_INSTALL='false' \
ARG_START_SCRIPT="$(echo -n '${b64(start)}' | base64 -d)" \
ARG_WAIT_FOR_START_SCRIPT="$(echo -n '${b64(wait)}' | base64 -d)" \
ARG_AGENTAPI_PORT='${port}' \
ARG_TASK_ID='bench' \
ARG_ENABLE_STATE_PERSISTENCE='true' \
ARG_LIB=${q(`${files}/agentapi-lib.sh`)} \
${q(`${files}/main.sh`)}
`;
}

/** The folders and files the launch needs that our start made, which a cold run wiped. */
async function prepareLaunch(b: BenchWorkspace, launch: Launch): Promise<string> {
  const logFile = path.join(b.ws.moduleDir, "logs", "agentapi.log");
  await mkdir(path.dirname(logFile), { recursive: true, mode: 0o700 });
  await mkdir(launch.cwd, { recursive: true });
  // AgentAPI's own TMPDIR is the module's tmp/ folder, which the start creates and a cold run wipes.
  if (launch.env.TMPDIR) await mkdir(launch.env.TMPDIR, { recursive: true, mode: 0o700 });
  for (const [file, content] of launch.files) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content, { mode: 0o600 });
  }
  return logFile;
}

async function launchDirectly(b: BenchWorkspace, launch: Launch): Promise<void> {
  const logFile = await prepareLaunch(b, launch);
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
type Variant = "ours" | "registry" | "floor";
const VARIANTS: Variant[] = ["ours", "registry", "floor"];

/** One line: the median over the floor, with the spread of the figure itself. */
function overFloor(name: string, values: number[], floor: number[]): string {
  const over = median(values) - median(floor);
  return `${name} is ${Math.round(over)} ms over the floor (median ${Math.round(median(values))} ms against ${Math.round(median(floor))} ms)`;
}

/** What the module's install step finds, for a start with the default install settings. */
interface Installed {
  /** The version the Goose under test reports, for goose_version. */
  gooseVersion: string;
}

/**
 * AgentAPI and Goose where the module's own install puts them (AgentAPI in
 * the module's bin/, Goose in ~/.local/bin), in the versions it asks for, so
 * that a start with install_agentapi and install_goose on downloads nothing.
 */
async function placeInstalled(b: BenchWorkspace): Promise<void> {
  const bin = path.join(b.ws.moduleDir, "bin");
  await mkdir(bin, { recursive: true, mode: 0o700 });
  await copyFile(tools.agentapiUnderTest, path.join(bin, "agentapi"));
  await chmod(path.join(bin, "agentapi"), 0o755);
  const localBin = path.join(b.ws.home, ".local", "bin");
  await mkdir(localBin, { recursive: true });
  await symlink(gooseUnderTest().bin, path.join(localBin, "goose"));
}

async function benchKind(kind: Kind, runs: number, installed?: Installed): Promise<void> {
  const b = await benchWorkspace(
    installed
      ? {
          install_agentapi: true,
          install_goose: true,
          goose_version: installed.gooseVersion,
          agentapi_version: `v${tools.agentapiNewVersion}`,
        }
      : {},
  );
  const label = installed ? `${kind} start (install settings on, the defaults)` : `${kind} start`;
  const stable: Record<Variant, number[]> = { ours: [], registry: [], floor: [] };
  const exit: Record<Exclude<Variant, "floor">, number[]> = { ours: [], registry: [] };
  const ourPhases = new Map<string, number[]>();
  const env = { ...b.ws.env(), PATH: `${b.ws.env().PATH}:/usr/local/bin:/usr/bin:/bin` };
  try {
    if (installed) await placeInstalled(b);
    // A start to learn the command line from; for warm, a conversation to resume.
    await startSettled(b);
    if (kind === "warm") await b.ws.send("bench: a message to resume");
    let launch = await captureLaunch(b);
    await stopAll(b);
    for (let i = 0; i < runs; i++) {
      // Rotate which goes first, so none always runs on a warmer machine.
      const order = VARIANTS.map((_, k) => VARIANTS[(i + k) % VARIANTS.length] as Variant);
      for (const variant of order) {
        if (kind === "cold") await wipeHome(b);
        if (variant === "ours") {
          const t = await toStable(b, () => b.ws.runStart(b.rendered));
          const result = t.result as Awaited<ReturnType<typeof b.ws.runScript>>;
          if (result.code !== 0)
            throw new Error(`start script exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
          stable.ours.push(t.stable);
          exit.ours.push(t.done);
          for (const p of phases(result.stdout)) ourPhases.set(p.name, [...(ourPhases.get(p.name) ?? []), p.ms]);
          launch = await captureLaunch(b);
        } else if (variant === "registry") {
          const script = registrySequence(b.ws.home, launch, b.ws.port);
          const t = await toStable(b, async () => {
            await prepareLaunch(b, launch);
            return run("/bin/bash", ["-c", script], { cwd: b.ws.home, env });
          });
          const result = t.result as Awaited<ReturnType<typeof run>>;
          if (result.code !== 0)
            throw new Error(`registry sequence exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
          stable.registry.push(t.stable);
          exit.registry.push(t.done);
        } else {
          stable.floor.push((await toStable(b, () => launchDirectly(b, launch))).stable);
        }
        await b.ws.waitStable();
        await stopAll(b);
      }
    }
  } finally {
    await b.close();
  }
  console.log(figure(`${label}, ours: to "stable"`, stable.ours));
  console.log(figure(`${label}, ours: until the script exits`, exit.ours));
  for (const [name, values] of ourPhases) console.log(figure(`  inside it, phase ${name}`, values));
  console.log(figure(`${label}, registry sequence: to "stable"`, stable.registry));
  console.log(figure(`${label}, registry sequence: until it exits`, exit.registry));
  console.log(figure(`${label}, floor: AgentAPI directly, to "stable"`, stable.floor));
  const goal = GOAL_OVER_FLOOR_MS[kind];
  const over = median(stable.ours) - median(stable.floor);
  console.log(`${overFloor("registry sequence", stable.registry, stable.floor)}`);
  console.log(
    `${over <= goal ? "GOAL MET" : "GOAL MISSED"}: ${overFloor(`${label}, ours,`, stable.ours, stable.floor)}; goal <= ${goal} ms; ours - registry ${Math.round(median(stable.ours) - median(stable.registry))} ms`,
  );
  console.log(`(${loadLine()})`);
}

export async function benchStart(runs: number): Promise<void> {
  const goose = gooseUnderTest();
  const reported = (await run(goose.bin, ["--version"])).stdout.trim();
  const gooseVersion = /\d+\.\d+\.\d+/.exec(reported)?.[0];
  if (gooseVersion === undefined) throw new Error(`${goose.bin} --version printed no version: ${reported}`);
  const which = goose.real ? `a real Goose, ${reported} (${goose.bin})` : "the Goose test double";
  console.log(
    `start: everything installed, AgentAPI ${tools.agentapiNewVersion}, ${which}; ${runs} run(s) per variant, interleaved, warm (found on PATH, then installed by the module) then cold`,
  );
  await benchKind("warm", runs);
  await benchKind("warm", runs, { gooseVersion });
  await benchKind("cold", runs);
}

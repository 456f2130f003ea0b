// Idle-stop timing on this machine, all in one run, against real AgentAPI and
// the Goose test double, which ignores SIGINT at its prompt as real Goose
// 1.46.1 does:
// - our rendered stop coder_script (`sh -c`, as the Coder agent runs it);
// - a re-implementation of the registry agentapi module's shutdown sequence
//   (registry/coder/modules/agentapi/scripts/agentapi-shutdown.sh in
//   coder/registry): SIGUSR1, a fixed `sleep 1`, GET /messages and the
//   snapshot POST, SIGTERM, then an unbounded wait for the PID;
// - the floor, AgentAPI alone driven from this process: SIGUSR1 until the save
//   is confirmed, then `/exit` typed into Goose, timed to AgentAPI's exit.
// Each runs right after a short conversation, alternating, several times each.
// Also: how long each phase of our stop took, from its own log lines.
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { isRunning, tools, type Workspace } from "../support/workspace/index.js";
import { benchWorkspace, expectExit0, phases, startSettled } from "./bench-workspace.js";
import { figure, median } from "./stats.js";

// Goals for an idle stop: a median of at most 250 ms for the whole
// coder_script, within 150 ms of AgentAPI's own floor measured in the same run.
const GOAL_MEDIAN_MS = 250;
const GOAL_OVER_FLOOR_MS = 150;

async function fileMark(file: string): Promise<string> {
  const s = await stat(file).catch(() => null);
  return s ? `${s.ino}:${s.mtimeMs}:${s.size}` : "";
}

/** AgentAPI alone: SIGUSR1 until its state file or log shows the save, then `/exit` typed into Goose, until AgentAPI has exited. */
async function floorStop(ws: Workspace): Promise<number> {
  const pid = Number((await readFile(path.join(ws.moduleDir, "agentapi.pid"), "utf8")).trim());
  const stateFile = path.join(ws.moduleDir, "agentapi-state.json");
  const agentLog = path.join(ws.moduleDir, "logs", "agentapi.log");
  // The supervisor would restart the AgentAPI this ends: it stands down first, outside the timing.
  const supervisor = Number((await readFile(path.join(ws.moduleDir, "supervisor.pid"), "utf8").catch(() => "")).trim());
  if (supervisor > 1) {
    process.kill(supervisor, "SIGTERM");
    while (await isRunning(supervisor)) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const logBefore = (await readFile(agentLog, "utf8")).length;
  const markBefore = await fileMark(stateFile);
  const started = performance.now();
  process.kill(pid, "SIGUSR1");
  for (;;) {
    if ((await fileMark(stateFile)) !== markBefore) break;
    if (/State saved successfully|Skipping state save/.test((await readFile(agentLog, "utf8")).slice(logBefore))) break;
  }
  await ws.agentapi.post("/exit\r", "raw");
  while (await isRunning(pid)) await new Promise((resolve) => setTimeout(resolve, 1));
  return Math.round(performance.now() - started);
}

/**
 * The registry's shutdown order, written from its description: PID from the
 * PID file; SIGUSR1 and a fixed one-second sleep (persistence on, binary >=
 * 0.12.0); the task-log capture in a subshell so a failure cannot abort the
 * shutdown (last 10 messages, at most 64 KB: drop the oldest, then keep the
 * last 56 KB of the one left, behind a marker); SIGTERM; then wait for the PID
 * with no upper bound, warning every 5 s. The description does not say how
 * often the wait polls; 0.1 s is assumed, which can only flatter it.
 *
 * "Wait for the PID to disappear" (`kill -0`) also waits while the exited
 * AgentAPI is a zombie, until whoever inherited it reaps it. On this machine
 * PID 1 reaps orphans a second or more late, so the bench also runs the same
 * sequence with a wait that counts a zombie as exited (zombieAware), which
 * isolates the cost of the fixed sleep from the cost of this machine's init.
 */
function registrySequence(pidFile: string, port: number, taskId: string, zombieAware: boolean): string {
  const alive = zombieAware
    ? `kill -0 "$pid" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)" != Z ]`
    : `kill -0 "$pid" 2>/dev/null`;
  return `
set -u
pid_file='${pidFile}'
pid=""
[ -f "$pid_file" ] && pid="$(cat "$pid_file")"
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  kill -USR1 "$pid"
  sleep 1
fi
(
  set -e
  body="$(curl -fsS --max-time 10 "http://localhost:${port}/messages")"
  payload="$(printf '%s' "$body" | jq -c '{messages: .messages[-10:]}')"
  while [ "$(printf '%s' "$payload" | wc -c)" -gt 65536 ] && [ "$(printf '%s' "$payload" | jq '.messages | length')" -gt 1 ]; do
    payload="$(printf '%s' "$payload" | jq -c '{messages: .messages[1:]}')"
  done
  if [ "$(printf '%s' "$payload" | wc -c)" -gt 65536 ]; then
    payload="$(printf '%s' "$payload" | jq -c '.messages[-1].content |= "[...content truncated...]\\n\\n" + .[-57344:]')"
  fi
  code="$(printf '%s' "$payload" | curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X POST \\
    -H "Coder-Session-Token: $CODER_AGENT_TOKEN" -H "Content-Type: application/json" --data-binary @- \\
    "$CODER_AGENT_URL/api/v2/workspaceagents/me/tasks/${taskId}/log-snapshot?format=agentapi")"
  case "$code" in 204 | 404) ;; *) echo "snapshot upload answered $code" >&2 ;; esac
) || echo "task log capture failed" >&2
if [ -n "$pid" ]; then
  kill -TERM "$pid" 2>/dev/null || true
  waited=0
  while ${alive}; do
    sleep 0.1
    waited=$((waited + 1))
    if [ $((waited % 50)) -eq 0 ]; then echo "still waiting for AgentAPI ($pid) to exit" >&2; fi
  done
fi
`;
}

export async function benchStop(runs: number): Promise<void> {
  // The registry's sequence and the floor end AgentAPI without our stop
  // script, which a supervisor would take for a crash and restart; the
  // stand-down's share of our stop is in `npm run bench -- supervisor`.
  const b = await benchWorkspace({ supervise: false });
  const { ws, coder, rendered, taskId } = b;
  type Variant = "ours" | "registry" | "registry, zombie-aware wait" | "floor";
  const variants: Variant[] = ["ours", "registry", "registry, zombie-aware wait", "floor"];
  const results: Record<Variant, number[]> = { ours: [], registry: [], "registry, zombie-aware wait": [], floor: [] };
  const ourPhases = new Map<string, number[]>();
  try {
    const pidFile = path.join(ws.moduleDir, "agentapi.pid");
    const scripts: Record<Exclude<Variant, "floor">, string> = {
      ours: rendered.stop,
      registry: registrySequence(pidFile, ws.port, taskId, false),
      "registry, zombie-aware wait": registrySequence(pidFile, ws.port, taskId, true),
    };
    console.log(
      `idle stop: AgentAPI ${tools.agentapiNewVersion}, Goose test double (SIGINT ignored at its prompt, as real Goose), ${runs} run(s) per variant`,
    );
    for (let i = 0; i < runs; i++) {
      // Rotate which goes first, so none always runs on a warmer machine.
      const order = variants.map((_, k) => variants[(i + k) % variants.length] as Variant);
      for (const variant of order) {
        await startSettled(b);
        await ws.send(`bench message ${i} for ${variant}`);
        const before = (await ws.messages()).length;
        const postsBefore = coder.snapshots().length;
        let ms: number;
        if (variant === "floor") {
          ms = await floorStop(ws);
        } else {
          const stopped = expectExit0(await ws.runScript(scripts[variant]), `${variant} stop`);
          const posts = coder.snapshots().length - postsBefore;
          if (posts !== 1) throw new Error(`${variant} stop: ${posts} snapshot POST(s), expected 1`);
          ms = stopped.ms;
          if (variant === "ours")
            for (const p of phases(stopped.stdout)) ourPhases.set(p.name, [...(ourPhases.get(p.name) ?? []), p.ms]);
        }
        await ws.waitFor(`${variant}: AgentAPI gone`, async () => (await ws.status()) === null, 10_000);
        const saved = JSON.parse((await ws.readModuleFile("agentapi-state.json")) ?? "{}") as { messages?: unknown[] };
        const savedCount = saved.messages?.length ?? 0;
        if (savedCount !== before)
          throw new Error(`${variant} stop: state file holds ${savedCount} message(s), /messages showed ${before}`);
        results[variant].push(ms);
      }
    }
  } finally {
    await b.close();
  }
  console.log(figure("our stop coder_script (sh -c)", results.ours));
  for (const [name, values] of ourPhases) console.log(figure(`  inside it, phase ${name}`, values));
  console.log(figure("registry shutdown sequence", results.registry));
  console.log(figure("registry sequence, zombie-aware wait", results["registry, zombie-aware wait"]));
  console.log(figure("floor: AgentAPI alone (save, /exit)", results.floor));
  const ours = median(results.ours);
  const floor = median(results.floor);
  console.log(
    `registry / ours: ${(median(results.registry) / ours).toFixed(1)}x (zombie-aware wait: ${(median(results["registry, zombie-aware wait"]) / ours).toFixed(1)}x); ours - floor: ${Math.round(ours - floor)} ms`,
  );
  const ok = ours <= GOAL_MEDIAN_MS && ours - floor <= GOAL_OVER_FLOOR_MS;
  console.log(
    `${ok ? "GOAL MET" : "GOAL MISSED"}: our median <= ${GOAL_MEDIAN_MS} ms and within ${GOAL_OVER_FLOOR_MS} ms of the floor`,
  );
}

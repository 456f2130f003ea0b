// What the supervisor costs and gives, on this machine, against real AgentAPI
// and the Goose test double:
// - memory: the supervisor's resident memory while it watches an idle
//   AgentAPI, its `sleep` included (VmRSS in /proc/<pid>/status, proc(5));
// - recovery: kill -9 AgentAPI half a second after a turn ended (AgentAPI
//   said stable), then time until an AgentAPI answers on the port again,
//   until Goose is ready (stable), and until that turn is back in /messages;
// - autosave: turns with the supervisor on and off. Each is sent after a
//   pause like a user's, 1 to 1.5 s after the previous one settled; the
//   supervisor saves at the first stable, so a late save would land at the
//   start of the next turn. A turn is timed from POST /message to
//   Goose storing its reply, and to AgentAPI stable again; the saves' own
//   durations come from logs/supervisor.log. The worst case, a save sent at
//   the very moment a message is posted, is timed too (without the
//   supervisor, SIGUSR1 sent by the bench);
// - stand-down: idle stops with the supervisor on and off, with the stop's own
//   `phase supervisor` line.
//
// Run: npm run bench -- supervisor [runs, default 5] (a section of bench/main.ts)
//
// Timing goals live here, never in tests.
import { randomUUID } from "node:crypto";
import { readFile, readlink, rm } from "node:fs/promises";
import path from "node:path";
import { renderModule, tools, Workspace } from "../support/workspace/index.js";
import { loadLine } from "./stats.js";

let runs = 5;
// The bound for an AgentAPI answering again after a crash.
const GOAL_BACK_MS = 10_000;
// The module's own long-running cost beside AgentAPI and Goose.
const GOAL_RSS_MB = 8;

function stats(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  return `min ${sorted[0]} ms, median ${median} ms, max ${sorted[sorted.length - 1]} ms (n=${sorted.length})`;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function workspace(supervise: boolean) {
  const ws = await Workspace.create();
  const rendered = await renderModule(
    ws.goose.vars({
      agent_id: "bench",
      folder: path.join(ws.home, "project"),
      goose_provider: "anthropic",
      goose_model: "claude-sonnet-4-5",
      task: { enabled: true, id: randomUUID(), prompt: "Summarise this project in one sentence." },
      install_goose: false,
      install_agentapi: false,
      agentapi_port: ws.port,
      supervise,
    }),
    { CODER_WORKSPACE_ID: randomUUID() },
  );
  const started = await ws.runStart(rendered);
  if (started.code !== 0) throw new Error(`start script exited ${started.code}:\n${started.stdout}\n${started.stderr}`);
  await ws.waitStable();
  return { ws, rendered };
}

async function agentapiPid(ws: Workspace): Promise<number> {
  return Number((await ws.readModuleFile("agentapi.pid"))?.trim());
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return Math.round(performance.now() - started);
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** VmRSS in /proc/<pid>/status (proc(5)), in kB; 0 once the process is gone. */
async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0);
}

/** The supervisor's child processes (proc(5): /proc/<pid>/task/<tid>/children). */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  return text.split(" ").filter(Boolean).map(Number);
}

const exeOf = (pid: number) => readlink(`/proc/${pid}/exe`).catch(() => "?");

/**
 * The supervisor's resident memory in MB while it watches an idle AgentAPI:
 * the sh and the `sleep` it keeps, sampled every 100 ms for a second. An
 * autosave helper seen meanwhile (Node.js, for a moment after a change in
 * Goose's database) goes to `helpers` instead.
 */
async function supervisorRssMb(ws: Workspace, helpers: number[]): Promise<number[]> {
  const pid = Number((await ws.readModuleFile("supervisor.pid"))?.trim());
  const mb = (kb: number) => Math.round((kb / 1024) * 10) / 10;
  const samples: number[] = [];
  for (let i = 0; i < 10; i++) {
    let kb = await rssKb(pid);
    if (kb === 0) throw new Error(`no VmRSS for the supervisor (PID ${pid})`);
    for (const child of await childrenOf(pid)) {
      const exe = await exeOf(child);
      if (exe.endsWith("/sleep")) kb += await rssKb(child);
      else if (/\/(node|bun)$/.test(exe)) helpers.push(mb(await rssKb(child)));
    }
    samples.push(mb(kb));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return samples;
}

// The README's promise: a crash this soon after a turn ends loses nothing.
const CRASH_AFTER_TURN_MS = 500;

/** A fresh workspace each time, so every crash is a first one (1 s backoff). */
async function recovery(): Promise<{
  back: number[];
  ready: number[];
  restored: number[];
  lost: number;
  rss: number[];
  helpers: number[];
}> {
  const back: number[] = [];
  const ready: number[] = [];
  const restored: number[] = [];
  const rss: number[] = [];
  const helpers: number[] = [];
  let lost = 0;
  for (let i = 0; i < runs; i++) {
    const { ws } = await workspace(true);
    try {
      rss.push(...(await supervisorRssMb(ws, helpers)));
      const turn = `turn ${i}, half a second before the crash`;
      // Returns once AgentAPI says stable with the reply shown: the turn has ended.
      await ws.send(turn);
      await new Promise((resolve) => setTimeout(resolve, CRASH_AFTER_TURN_MS));
      const old = await agentapiPid(ws);
      const killed = performance.now();
      process.kill(old, "SIGKILL");
      await until(
        "a new AgentAPI answering",
        async () => (await agentapiPid(ws)) !== old && (await ws.status()) !== null,
      );
      back.push(Math.round(performance.now() - killed));
      await until("Goose ready", async () => (await ws.status()) === "stable");
      ready.push(Math.round(performance.now() - killed));
      const shown = async () => (await ws.messages()).some((m) => m.content.includes(turn));
      // AgentAPI loads what was saved once Goose is ready: a turn not there soon after was lost.
      const found = await until("the turn restored", shown, 10_000).catch(() => null);
      if (found === null) lost++;
      else restored.push(Math.round(performance.now() - killed));
      console.log(
        `bench: crash ${i + 1}: AgentAPI answers after ${back.at(-1)} ms, Goose ready after ${ready.at(-1)} ms, the turn ${lost ? "LOST" : `back after ${restored.at(-1)} ms`}`,
      );
    } finally {
      await ws.cleanup();
      await rm(ws.home, { recursive: true, force: true });
    }
  }
  return { back, ready, restored, lost, rss, helpers };
}

interface TurnTimes {
  reply: number[];
  stable: number[];
  /** Each turn's wall-clock span, POST to stable. */
  spans: Array<[number, number]>;
}

// The user's pause before each message: across the window in which the save comes.
const PAUSES_MS = [1000, 1125, 1250, 1375, 1500];

/** `collide`: a save (SIGUSR1, with the last turn unsaved) sent at the same moment as the message, the worst case. */
async function turns(ws: Workspace, label: string, into: TurnTimes, collide = false): Promise<void> {
  for (let i = 0; i < runs; i++) {
    await ws.waitStable();
    await new Promise((resolve) => setTimeout(resolve, PAUSES_MS[i % PAUSES_MS.length]));
    const before = await ws.replies();
    const sentAt = Date.now();
    const sent = performance.now();
    const posted = ws.agentapi.post(`bench turn ${i} (${label})`);
    if (collide) process.kill(await agentapiPid(ws), "SIGUSR1");
    await posted;
    await until("the reply stored", async () => (await ws.replies()) > before);
    into.reply.push(Math.round(performance.now() - sent));
    await until("stable again", async () => (await ws.status()) === "stable");
    into.stable.push(Math.round(performance.now() - sent));
    into.spans.push([sentAt, Date.now()]);
  }
}

async function autosaveCost(): Promise<{
  on: TurnTimes;
  off: TurnTimes;
  collided: TurnTimes;
  saves: number[];
  inTurns: number;
}> {
  const on: TurnTimes = { reply: [], stable: [], spans: [] };
  const off: TurnTimes = { reply: [], stable: [], spans: [] };
  const collided: TurnTimes = { reply: [], stable: [], spans: [] };
  const withSupervisor = await workspace(true);
  const without = await workspace(false);
  try {
    await turns(withSupervisor.ws, "supervised", on);
    await turns(without.ws, "unsupervised", off);
    await turns(without.ws, "unsupervised, a save at the same moment", collided, true);
    await turns(withSupervisor.ws, "supervised", on);
    await turns(without.ws, "unsupervised", off);
    await turns(without.ws, "unsupervised, a save at the same moment", collided, true);
    const log = await readFile(path.join(withSupervisor.ws.moduleDir, "logs", "supervisor.log"), "utf8");
    const lines = [...log.matchAll(/^(\S+) goose-module: autosave after a turn: .* \((\d+) ms\)$/gm)];
    const saves = lines.map((m) => Number(m[2]));
    // A save line is written when the save is confirmed; it began that many ms earlier.
    const inTurns = lines.filter((m) => {
      const end = Date.parse(m[1] as string);
      const begin = end - Number(m[2]);
      return on.spans.some(([from, to]) => begin < to && end > from);
    }).length;
    return { on, off, collided, saves, inTurns };
  } finally {
    for (const { ws } of [withSupervisor, without]) {
      await ws.cleanup();
      await rm(ws.home, { recursive: true, force: true });
    }
  }
}

async function standDown(): Promise<{ on: number[]; off: number[]; phase: number[] }> {
  const on: number[] = [];
  const off: number[] = [];
  const phase: number[] = [];
  for (let i = 0; i < runs; i++) {
    for (const supervise of i % 2 ? [false, true] : [true, false]) {
      const { ws, rendered } = await workspace(supervise);
      try {
        await ws.send(`bench stop ${i}`);
        const stopped = await ws.runScript(rendered.stop);
        if (stopped.code !== 0) throw new Error(`stop exited ${stopped.code}:\n${stopped.stdout}\n${stopped.stderr}`);
        (supervise ? on : off).push(stopped.ms);
        const ms = /^goose-module: phase supervisor: (\d+) ms$/m.exec(stopped.stdout)?.[1];
        if (supervise) phase.push(Number(ms));
        console.log(
          `bench: idle stop, supervisor ${supervise ? "on " : "off"}: ${stopped.ms} ms (phase supervisor: ${ms ?? "?"} ms)`,
        );
      } finally {
        await ws.cleanup();
        await rm(ws.home, { recursive: true, force: true });
      }
    }
  }
  return { on, off, phase };
}

export async function benchSupervisor(n: number): Promise<void> {
  runs = n;
  console.log(`bench: AgentAPI ${tools.agentapiNewVersion}, Goose test double, ${runs} run(s) each (${loadLine()})`);
  const back = await recovery();
  const save = await autosaveCost();
  const stop = await standDown();
  console.log(`\n(${loadLine()})`);
  console.log(`kill -9 AgentAPI -> AgentAPI answers again      ${stats(back.back)}`);
  console.log(`kill -9 AgentAPI -> Goose ready (stable)        ${stats(back.ready)}`);
  console.log(
    `crash 0.5 s after a turn -> the turn in /messages ${back.restored.length ? stats(back.restored) : "never"}`,
  );
  console.log(`  turns lost to that crash (goal: 0)            ${back.lost} of ${runs}`);
  console.log(
    `supervisor resident memory (VmRSS), MB          ${stats(back.rss).replaceAll(" ms", "")} (goal: at most ${GOAL_RSS_MB})`,
  );
  const helpers = back.helpers.length ? stats(back.helpers).replaceAll(" ms", "") : "none seen";
  console.log(`  an autosave helper seen meanwhile, MB         ${helpers}`);
  console.log(`turn, POST to reply stored, supervisor on       ${stats(save.on.reply)}`);
  console.log(`turn, POST to reply stored, supervisor off      ${stats(save.off.reply)}`);
  console.log(`turn, POST to reply stored, a save at the POST  ${stats(save.collided.reply)}`);
  console.log(`turn, POST to stable again, supervisor on       ${stats(save.on.stable)}`);
  console.log(`turn, POST to stable again, supervisor off      ${stats(save.off.stable)}`);
  console.log(`turn, POST to stable again, a save at the POST  ${stats(save.collided.stable)}`);
  console.log(`autosave, SIGUSR1 to the save confirmed         ${stats(save.saves)}`);
  console.log(`autosaves that overlapped a turn                ${save.inTurns} of ${save.saves.length}`);
  console.log(`idle stop coder_script, supervisor on           ${stats(stop.on)}`);
  console.log(`idle stop coder_script, supervisor off          ${stats(stop.off)}`);
  console.log(`  of which the stand-down (phase supervisor)    ${stats(stop.phase)}`);
  const ok = median(back.back) <= GOAL_BACK_MS;
  console.log(`${ok ? "GOAL MET" : "GOAL MISSED"}: AgentAPI answers within ${GOAL_BACK_MS} ms of a kill -9 (median)`);
  const small = Math.max(...back.rss) <= GOAL_RSS_MB;
  console.log(
    `${small ? "GOAL MET" : "GOAL MISSED"}: the supervisor's resident memory at most ${GOAL_RSS_MB} MB (max)`,
  );
  console.log(`${back.lost === 0 ? "GOAL MET" : "GOAL MISSED"}: a crash 0.5 s after a turn ends loses nothing`);
}

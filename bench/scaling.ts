// Idle stop time against the length of the chat: our stop coder_script with
// 10, 1,000 and 10,000 messages in AgentAPI's chat, alternating in one run.
// The chat is written into AgentAPI's state file before a warm start (AgentAPI
// loads it), then one message is sent, so the stop saves, snapshots and checks
// a chat of that length. The cost should grow linearly.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { benchWorkspace, expectExit0, phases, startSettled, stopAll } from "./bench-workspace.js";
import { figure, median } from "./stats.js";

const SIZES = [10, 1_000, 10_000];

/** An AgentAPI state file (version 1) holding `count` messages of about 200 characters, the last one the agent's. */
function stateWith(count: number): string {
  const messages = Array.from({ length: count }, (_, i) => {
    const role = (count - 1 - i) % 2 === 0 ? "agent" : "user";
    const text = role === "agent" ? `Goose reply ${i}: ${"done with that part. ".repeat(8)}` : `Request ${i}: continue`;
    return { id: i, message: text, role, time: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString() };
  });
  return `${JSON.stringify({ version: 1, messages, initial_prompt: "", initial_prompt_sent: false })}\n`;
}

export async function benchScaling(runs: number): Promise<void> {
  console.log(`stop with a long chat: ${SIZES.join(", ")} messages, ${runs} run(s) each`);
  const b = await benchWorkspace();
  const { ws } = b;
  const results = new Map<number, number[]>(SIZES.map((n) => [n, []]));
  const phaseResults = new Map<string, number[]>();
  try {
    await startSettled(b);
    await ws.send("bench: a message to resume");
    await stopAll(b);
    for (let i = 0; i < runs; i++) {
      const order = SIZES.map((_, k) => SIZES[(i + k) % SIZES.length] as number);
      for (const size of order) {
        await writeFile(path.join(ws.moduleDir, "agentapi-state.json"), stateWith(size), { mode: 0o600 });
        await startSettled(b);
        await ws.send(`bench message ${i} with ${size} before it`);
        const before = (await ws.messages()).length;
        if (before !== size + 2) throw new Error(`AgentAPI shows ${before} message(s), expected ${size + 2}`);
        const stopped = expectExit0(await ws.runScript(b.rendered.stop), "stop script");
        await ws.waitFor("AgentAPI gone", async () => (await ws.status()) === null, 10_000);
        const saved = JSON.parse((await ws.readModuleFile("agentapi-state.json")) ?? "{}") as { messages?: unknown[] };
        if (saved.messages?.length !== before)
          throw new Error(`the state file holds ${saved.messages?.length ?? 0} message(s), /messages showed ${before}`);
        results.get(size)?.push(stopped.ms);
        for (const p of phases(stopped.stdout)) {
          const key = `${size} ${p.name}`;
          phaseResults.set(key, [...(phaseResults.get(key) ?? []), p.ms]);
        }
      }
    }
  } finally {
    await b.close();
  }
  for (const size of SIZES) {
    console.log(figure(`stop with ${size.toLocaleString("en")} messages`, results.get(size) as number[]));
    const inside = [...phaseResults].filter(([key]) => key.startsWith(`${size} `));
    console.log(`  phase medians: ${inside.map(([key, v]) => `${key.split(" ")[1]} ${median(v)}`).join(", ")} (ms)`);
  }
  const [small, middle, large] = SIZES.map((n) => median(results.get(n) as number[])) as [number, number, number];
  const [few, some, many] = SIZES as [number, number, number];
  const perThousandLow = ((middle - small) / (some - few)) * 1000;
  const perThousandHigh = ((large - middle) / (many - some)) * 1000;
  console.log(
    `growth per 1,000 messages: ${perThousandLow.toFixed(1)} ms (10 -> 1,000), ${perThousandHigh.toFixed(1)} ms (1,000 -> 10,000); 10,000 / 10 messages: ${(large / small).toFixed(2)}x`,
  );
}

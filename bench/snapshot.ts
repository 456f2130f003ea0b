// Building the task log snapshot as the stop does (src/agentapi/snapshot.ts,
// agent messages cleaned by goose/screen.ts), in this process: ten short
// messages, and the same with a last message of 1 MiB and 4 MiB, ASCII and
// multi-byte text with characters JSON escapes. The cost should grow with the
// message's size, once: a 1 MiB message may add at most 20 ms.
import { buildSnapshot, type ChatMessage, SNAPSHOT_LIMITS } from "../src/agentapi/snapshot.js";
import { withoutStatus } from "../src/goose/screen.js";
import { figure, median } from "./stats.js";

const GOAL_1MIB_OVER_SHORT_MS = 20;
const MIB = 1024 * 1024;

function chat(last: string): ChatMessage[] {
  const messages: ChatMessage[] = Array.from({ length: 9 }, (_, i) => ({
    id: i,
    role: i % 2 ? "agent" : "user",
    content: `message ${i}: ${"words ".repeat(20)}`,
    time: "2026-01-01T00:00:00Z",
  }));
  messages.push({ id: 9, role: "agent", content: last, time: "2026-01-01T00:00:00Z" });
  return messages;
}

/** `bytes` UTF-8 bytes of text made of `unit`, repeated. */
function textOf(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)));
}

function time(messages: ChatMessage[], rounds: number): number[] {
  const values: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const snapshot = buildSnapshot(messages, { ...SNAPSHOT_LIMITS, agentText: withoutStatus });
    values.push(Math.round((performance.now() - started) * 100) / 100);
    if (Buffer.byteLength(snapshot.payload) > 64 * 1024) throw new Error("snapshot over its limit");
  }
  return values;
}

export function benchSnapshot(rounds: number): void {
  console.log(`snapshot building: ${rounds} round(s) each, after one untimed warm-up`);
  const cases: Array<[string, ChatMessage[]]> = [
    ["10 short messages", chat("the end")],
    ["last message 1 MiB ASCII", chat(textOf("build log line 0123456789\n", MIB))],
    ["last message 1 MiB multi-byte + escapes", chat(textOf('é€😀"\\\t', MIB))],
    ["last message 4 MiB ASCII", chat(textOf("build log line 0123456789\n", 4 * MIB))],
  ];
  const medians = new Map<string, number>();
  for (const [name, messages] of cases) {
    time(messages, 1);
    const values = time(messages, rounds);
    medians.set(name, median(values));
    console.log(figure(`snapshot, ${name}`, values));
  }
  const short = medians.get("10 short messages") as number;
  const oneMib = Math.max(
    medians.get("last message 1 MiB ASCII") as number,
    medians.get("last message 1 MiB multi-byte + escapes") as number,
  );
  const added = oneMib - short;
  const fourAdded = (medians.get("last message 4 MiB ASCII") as number) - short;
  const oneAsciiAdded = (medians.get("last message 1 MiB ASCII") as number) - short;
  console.log(
    `over short messages, 1 MiB adds ${added.toFixed(1)} ms (ASCII ${oneAsciiAdded.toFixed(1)} ms) and 4 MiB ${fourAdded.toFixed(1)} ms; a cost linear in the size would make the last 4 times the ASCII one`,
  );
  console.log(
    `${added <= GOAL_1MIB_OVER_SHORT_MS ? "GOAL MET" : "GOAL MISSED"}: a 1 MiB message adds <= ${GOAL_1MIB_OVER_SHORT_MS} ms`,
  );
}

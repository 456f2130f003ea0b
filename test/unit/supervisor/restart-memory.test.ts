import { expect, it } from "vitest";
import { parseRestartMemory, type RestartMemory } from "../../../src/supervisor/supervisor.js";

const SINCE = 1_790_000_000_000;
const MEMORY: RestartMemory = {
  since: SINCE,
  history: { failures: [SINCE + 1_000, SINCE + 3_000] },
  run: { restarted: true, startedAt: SINCE + 4_000, launched: false },
  problem: "Goose exited at once",
  lastScreen: null,
};
const text = (changes: Record<string, unknown>) => JSON.stringify({ ...MEMORY, ...changes });

it.each([
  ["the memory of this start", JSON.stringify(MEMORY), MEMORY],
  ["an earlier start's memory", text({ since: SINCE - 1 }), null],
  ["a failure time that is not a number", text({ history: { failures: [SINCE, "soon"] } }), null],
  ["no list of failures", text({ history: {} }), null],
  ["no run", text({ run: undefined }), null],
  ["a run whose start is text", text({ run: { ...MEMORY.run, startedAt: "now" } }), null],
  ["a problem that is not text", text({ problem: 10 }), null],
  ["an array", JSON.stringify([MEMORY]), null],
  ["not JSON", "{", null],
])("parseRestartMemory: %s", (_, given, expected) => {
  expect(parseRestartMemory(given, SINCE)).toEqual(expected);
});

import { describe, expect, it } from "vitest";
import { AUTOSAVE_START, autosaveStep, compareWithSaved } from "../../../src/supervisor/autosave.js";

/** Feeds /status readings from a fresh launch; returns the indexes of the readings that asked for a save. */
function savesFor(readings: Array<string | null>): number[] {
  let state = AUTOSAVE_START;
  const saves: number[] = [];
  readings.forEach((status, i) => {
    const step = autosaveStep(state, status);
    state = step.state;
    if (step.save) saves.push(i);
  });
  return saves;
}

describe("autosaveStep", () => {
  it.each([
    ["Goose starting, then idle: one save at the first stable", ["running", "stable", "stable", "stable"], [1]],
    ["a launch that is stable at once saves at once (the launch counts as a turn)", ["stable", "stable"], [0]],
    [
      "one save per turn, at its first stable, however many readings",
      ["stable", "stable", "running", "running", "stable", "stable", "stable"],
      [0, 4],
    ],
    [
      "a stable pause inside a turn saves too; the turn's end saves again",
      ["running", "stable", "running", "stable", "stable"],
      [1, 3],
    ],
    [
      "no answer (AgentAPI busy sending a message, or gone) changes nothing",
      ["running", null, "stable", "running", null, null, "stable"],
      [2, 6],
    ],
    ["an unknown status changes nothing", ["running", "starting", "stable"], [2]],
    ["nothing ran since the last save: no second save", ["stable", "stable", null, "stable"], [0]],
  ] as Array<[string, Array<string | null>, number[]]>)("%s", (_name, readings, saves) => {
    expect(savesFor(readings)).toEqual(saves);
  });
});

describe("compareWithSaved", () => {
  it.each([
    ["no saved chat: anything shown is new", null, ["banner"], "new"],
    [
      "fewer messages than saved: AgentAPI has not loaded the file yet",
      ["banner", "hi", "reply"],
      ["new banner"],
      "not-loaded",
    ],
    ["the same messages: nothing to save", ["banner", "hi", "reply"], ["banner", "hi", "reply"], "saved"],
    ["a turn more: new", ["banner", "hi", "reply"], ["banner", "hi", "reply", "more", "reply 2"], "new"],
    ["the last message grew: new", ["banner", "hi", "reply"], ["banner", "hi", "reply, longer"], "new"],
  ] as Array<[string, string[] | null, string[], string]>)("%s", (_name, saved, shown, expected) => {
    expect(compareWithSaved(saved, shown)).toBe(expected);
  });
});

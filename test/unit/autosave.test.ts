import { describe, expect, it } from "vitest";
import { AUTOSAVE_START, autosaveStep, compareWithSaved } from "../../src/autosave.js";

const DEBOUNCE = 1000;

/** Feeds /status readings (status, time in ms) from a fresh launch; returns the times a save was asked for. */
function savesFor(readings: Array<[string | null, number]>): number[] {
  let state = AUTOSAVE_START;
  const saves: number[] = [];
  for (const [status, at] of readings) {
    const step = autosaveStep(state, status, at, DEBOUNCE);
    state = step.state;
    if (step.save) saves.push(at);
  }
  return saves;
}

describe("autosaveStep", () => {
  it.each([
    [
      "Goose starting, then idle: one save once settled",
      [
        ["running", 0],
        ["stable", 2500],
        ["stable", 3000],
        ["stable", 3500],
        ["stable", 4000],
      ],
      [3500],
    ],
    [
      "not before the debounce has passed",
      [
        ["stable", 0],
        ["stable", 500],
        ["stable", 999],
      ],
      [],
    ],
    [
      "one save per turn, however many readings",
      [
        ["stable", 0],
        ["stable", 1000],
        ["stable", 1500],
        ["running", 2000],
        ["running", 2500],
        ["stable", 5000],
        ["stable", 5500],
        ["stable", 6000],
        ["stable", 9000],
      ],
      [1000, 6000],
    ],
    [
      "a short stable pause inside a turn does not save",
      [
        ["stable", 0],
        ["stable", 1000],
        ["running", 2000],
        ["stable", 4000],
        ["running", 4500],
        ["stable", 7000],
        ["stable", 8000],
      ],
      [1000, 8000],
    ],
    [
      "no answer (AgentAPI busy sending a message) changes nothing",
      [
        ["stable", 0],
        ["stable", 1000],
        ["running", 2000],
        ["stable", 4000],
        [null, 4500],
        ["stable", 5000],
      ],
      [1000, 5000],
    ],
    [
      "nothing ran since the last save: no second save",
      [
        ["stable", 0],
        ["stable", 1000],
        ["stable", 60_000],
        [null, 61_000],
        ["stable", 62_000],
      ],
      [1000],
    ],
  ] as Array<[string, Array<[string | null, number]>, number[]]>)("%s", (_name, readings, saves) => {
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

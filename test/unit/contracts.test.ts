// docs/architecture.md's "On-disk contracts": each file the processes share
// has one writer, the one piece of code the table names, and that is what
// src/ holds: the writers are found in the code (contracts/writers.ts), never
// taken from the table.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { namesOf } from "./contracts/names.js";
import { ROOT, shWriters, tsWriters } from "./contracts/writers.js";

interface Row {
  file: string;
  /** The code named in "Written by": paths under src/ as the docs write them, others from the repository's root. */
  code: string[];
}

function contractRows(): Row[] {
  const doc = readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf("## On-disk contracts"));
  const table = section.slice(0, section.indexOf("\n## "));
  return table
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [file, written] = line.split(" | ");
      return {
        file: /`([^`]+)`/.exec(file ?? "")?.[1] ?? "",
        code: [...(written ?? "").matchAll(/`([^`]+\.(?:ts|sh|tftpl))`/g)].map((m) => m[1] as string),
      };
    });
}

const rows = contractRows();
const named = namesOf(rows.map((r) => r.file));
const found = [tsWriters(named), shWriters(named)];
const writersOf = (file: string) => found.flatMap((w) => [...(w.get(file) ?? [])]).sort();

describe("the on-disk contracts", () => {
  it("the table lists the module folder's shared files", () => {
    expect(rows.map((r) => r.file)).toEqual(
      expect.arrayContaining(["agentapi-launch.json", "stop-findings.json", "supervisor.gave-up", "logs/agentapi.log"]),
    );
  });

  it.each(rows)("$file: the table names one writer, the one src/ holds", ({ file, code }) => {
    expect(code.length, "code named in the row's Written by").toBeLessThanOrEqual(1);
    for (const writer of code)
      expect(existsSync(path.join(ROOT, writer.includes("/templates/") ? "" : "src", writer)), writer).toBe(true);
    // A writer outside src/ (AgentAPI, the coder_script's wrapper) leaves none in it.
    expect(writersOf(file)).toEqual(code.filter((c) => !c.includes("/templates/")));
  });
});

import { realpath } from "node:fs/promises";
import { type StateSummary, summarizeState } from "../agentapi/state-file.js";
import { decideInterruptedTurn, type TurnDecision } from "../goose/interrupted-turn.js";
import type { SessionProbe, TailRead } from "../goose/session-records.js";
import { readSession } from "../goose/sessions.js";
import { readOptional } from "../lib/files.js";
import { log, warn } from "../lib/log.js";
import type { GooseSettings, ModulePaths } from "../settings/config.js";
import { readChatOwner } from "./chat-owner.js";
import { decideStart, type StartDecision } from "./session-decision.js";

export interface LaunchPlan {
  sessionName: string;
  probe: SessionProbe;
  decision: StartDecision;
  /** The state file's text as read for the decision (null when there is none), so it is read once. */
  stateText: string | null;
  stateSummary: StateSummary;
  turn: TurnDecision;
  /** A supervisor's restart rather than a workspace start. */
  restart: boolean;
}

async function resolved(dir: string): Promise<string> {
  return realpath(dir).catch(() => dir);
}

/** Cold or warm from Goose's own session store, what to do with the saved chat, and whether an interrupted turn carries on. */
export async function decideLaunch(opts: {
  goose: GooseSettings;
  gooseBin: string;
  env: Record<string, string>;
  home: string;
  folder: string;
  paths: ModulePaths;
  restart: boolean;
}): Promise<LaunchPlan> {
  const { goose, paths } = opts;
  const name = goose.sessionName;
  // The saved chat and its owner are read while Goose answers. Goose's helpers
  // run one after another (readSession), never side by side: two Goose
  // processes opening one database at once may both migrate it, and Goose
  // 1.45-1.46 could corrupt a database written by concurrent processes
  // (aaif-goose/goose#11155).
  const notChecked = { kind: "unknown", reason: "not checked" } as const;
  const [read, stateText, owner] = await Promise.all([
    goose.continue
      ? readSession({ goose: opts.gooseBin, name, env: opts.env, home: opts.home, cwd: opts.folder })
      : { probe: notChecked, tail: notChecked },
    readOptional(paths.stateFile),
    readChatOwner(paths.stateOwner),
  ]);
  const { probe } = read;
  const stateSummary = summarizeState(stateText);
  const decision = decideStart({
    continueSession: goose.continue,
    sessionName: name,
    probe,
    state: stateSummary,
    owner,
    restart: opts.restart,
  });
  log(`${decision.mode} start: ${decision.reason}`);
  // Goose stores the resolved folder and compares resolved paths (observed with 1.46.1).
  if (
    probe.kind === "found" &&
    decision.mode === "warm" &&
    probe.workingDir &&
    (await resolved(probe.workingDir)) !== (await resolved(opts.folder))
  ) {
    warn(
      `session "${name}" was started in ${probe.workingDir}, not ${opts.folder}; Goose will ask in the chat whether to switch back`,
    );
  }
  const tail: TailRead = decision.mode === "warm" ? read.tail : { kind: "unknown", reason: "cold start" };
  const turn = decideInterruptedTurn({
    enabled: goose.continueInterruptedTurn !== false,
    mode: decision.mode,
    probe: tail,
  });
  if (decision.mode === "warm") (turn.action === "wait" ? warn : log)(`interrupted turn: ${turn.reason}`);
  return { sessionName: name, probe, decision, stateText, stateSummary, turn, restart: opts.restart };
}

import { decideInterruptedTurn, type TurnDecision } from "../goose/interrupted-turn.js";
import { describeNamesakes, type SessionProbe, type TailRead } from "../goose/session-records.js";
import { gooseSessionsDb, readSession } from "../goose/sessions.js";
import { fileIdentity, resolvedPath } from "../lib/files.js";
import { log, warn } from "../lib/log.js";
import { type ChatOwner, prepareChat, readSavedChat, type SavedChat } from "../lifecycle/chat-file.js";
import {
  type GooseAnswer,
  identities,
  readLaunchRecord,
  readStopFindings,
  stopFindingsFile,
  watchedFiles,
} from "../lifecycle/launch-record.js";
import { noteEarlierConversation } from "../predecessor/earlier-conversation.js";
import type { GooseSettings, ModulePaths } from "../settings/config.js";
import { decideSession, type StartDecision } from "./session-decision.js";
import { conversationEnd, decideShortcut, type ShortcutNow } from "./warm-shortcut.js";

export interface LaunchPlan {
  sessionName: string;
  probe: SessionProbe;
  decision: StartDecision;
  /** The saved chat as read for the decision, so it is read once. */
  saved: SavedChat;
  turn: TurnDecision;
  /** A supervisor's restart rather than a workspace start. */
  restart: boolean;
  /** What this launch took from Goose's store, for the launch record. */
  goose: GooseAnswer;
}

/** What a launch is planned from: the settings, the Goose to ask, and where it runs. */
interface PlanInputs {
  goose: GooseSettings;
  gooseBin: string;
  env: Record<string, string>;
  home: string;
  folder: string;
  paths: ModulePaths;
  restart: boolean;
}

/** Cold or warm from Goose's own session store, what to do with the saved chat, and whether an interrupted turn carries on. */
export async function planLaunch(opts: PlanInputs): Promise<LaunchPlan> {
  const { goose, paths } = opts;
  const name = goose.sessionName;
  // The saved chat and its owner are read while Goose answers. Goose's helpers
  // run one after another (readSession), never side by side: two Goose
  // processes opening one database at once may both migrate it, and Goose
  // 1.45-1.46 could corrupt a database written by concurrent processes
  // (aaif-goose/goose#11155).
  const notChecked = { kind: "unknown", reason: "not checked" } as const;
  const [recorded, stopped, now] = await Promise.all([
    readLaunchRecord(paths.launchRecord),
    readStopFindings(stopFindingsFile(paths)),
    lookNow(opts),
  ]);
  const shortcut = decideShortcut(recorded, stopped, now);
  const asked = () =>
    goose.continue
      ? readSession({
          goose: opts.gooseBin,
          name,
          env: opts.env,
          home: opts.home,
          cwd: opts.folder,
          // The launch record is written at every launch, whatever the
          // persistence; only its certain absence counts as a first launch.
          firstLaunch: recorded.first,
        })
      : { probe: notChecked, tail: notChecked, sessions: null };
  if (shortcut.take) log(`Goose not asked (no goose session export): ${shortcut.reason}`);
  else if (goose.continue && !recorded.first) log(`asking Goose: ${shortcut.reason}`);
  const [read, saved] = await Promise.all([
    shortcut.take ? { probe: shortcut.probe, tail: shortcut.tail, sessions: null } : asked(),
    readSavedChat(paths.stateFile),
  ]);
  const { probe } = read;
  const prompt = goose.prompt.trim() !== "";
  const decision = decideSession({
    continueSession: goose.continue,
    sessionName: name,
    probe,
    state: saved.summary,
    prompt,
    owner: saved.owner,
    restart: opts.restart,
  });
  if (probe.kind === "found") {
    const namesakes = describeNamesakes(name, probe);
    if (namesakes) log(namesakes);
  }
  log(`${decision.mode} start: ${decision.reason}`);
  if (probe.kind === "absent" && read.sessions)
    await noteEarlierConversation(read.sessions, opts.home, opts.folder, name);
  // Goose stores the resolved folder and compares resolved paths (observed with 1.46.1).
  if (
    probe.kind === "found" &&
    decision.mode === "warm" &&
    probe.workingDir &&
    (await resolvedPath(probe.workingDir)) !== (await resolvedPath(opts.folder))
  ) {
    warn(
      `session "${name}" was started in ${probe.workingDir}, not ${opts.folder}; Goose will ask in the chat whether to switch back`,
    );
  }
  const tail: TailRead = decision.mode === "warm" ? read.tail : { kind: "unknown", reason: "cold start" };
  const turn = decideInterruptedTurn({
    enabled: goose.continueInterruptedTurn !== false,
    // A start with a prompt begins its session with it (buildGooseArgs): the session's first message.
    firstPrompt: prompt,
    mode: decision.mode,
    probe: tail,
  });
  if (decision.mode === "warm") (turn.action === "wait" ? warn : log)(`interrupted turn: ${turn.reason}`);
  const found = probe.kind === "found" ? probe : null;
  return {
    sessionName: name,
    probe,
    decision,
    saved,
    turn,
    restart: opts.restart,
    goose: {
      db: now.db,
      binary: now.binary,
      binary_identity: now.binaryIdentity,
      folder: now.folder,
      session_id: decision.mode === "warm" ? (found?.id ?? null) : null,
      messages: found?.messages ?? null,
      working_dir: found?.workingDir ?? null,
      conversation_end: conversationEnd(decision.mode, tail, turn),
    },
  };
}

/** What decideShortcut holds against the launch record: plain file lookups, no Goose process. */
async function lookNow(opts: PlanInputs): Promise<ShortcutNow> {
  const db = gooseSessionsDb(opts.env, opts.home);
  const [binaryIdentity, files] = await Promise.all([
    fileIdentity(opts.gooseBin, true),
    identities(watchedFiles(db, opts.paths.stateFile)),
  ]);
  return {
    sessionName: opts.goose.sessionName,
    continueSession: opts.goose.continue,
    restart: opts.restart,
    folder: opts.folder,
    db,
    binary: opts.gooseBin,
    binaryIdentity,
    files,
  };
}

/**
 * Readies the saved chat for a launch with persistence as the plan decided,
 * recording the session it belongs to; returns the backup taken, if any.
 */
export function prepareSavedChat(paths: ModulePaths, plan: LaunchPlan): Promise<string | null> {
  const { decision, probe } = plan;
  const owner: ChatOwner = {
    session_name: plan.sessionName,
    session_id: decision.mode === "warm" && probe.kind === "found" ? probe.id : null,
  };
  return prepareChat(paths.stateFile, {
    action: decision.state,
    why: decision.stateReason,
    saved: plan.saved,
    owner,
    restart: plan.restart,
  });
}

import path from "node:path";
import { readTextOrNull } from "../lib/files.js";
import { watchFolders } from "../lib/folder-changes.js";
import { log, StepError } from "../lib/log.js";
import { pollUntil } from "../lib/poll.js";
import { isRunning } from "../lib/processes.js";
import { installDoneFor, readInstallDone } from "../lifecycle/install-done.js";

// The Coder agent starts every coder_script of a boot at once
// (agent/agentscripts/agentscripts.go in coder/coder), and the start runs what
// the install leaves. The start's Node.js therefore begins beside the install,
// does what needs nothing of it, and waits here before it reads what the
// install left. The install's sh wrapper (modules/agentapi/templates/run.sh.tftpl)
// alone writes install.state: "<run> running <pid>" as it begins, "<run> done
// <exit code>" as it ends, each a new file renamed over the name; the
// install's Node.js part records, as its last step, that it went well
// (lifecycle/install-done.ts), which the start takes first. <run> names the
// agent's run (its PID and start time), so a file from an earlier boot never
// counts.

/** How long the start waits for an install of its own run to begin. */
const INSTALL_BEGIN_MS = 60_000;

export type InstallVerdict =
  | { kind: "done" }
  | { kind: "wait" }
  /** The install's process is gone but the file says it runs: read the file again before believing it. */
  | { kind: "gone"; message: string }
  | { kind: "failed"; message: string };

/** The state file's line when it is agent run `run`'s and well formed: "done <exit code>" or "running <pid>". */
function stateOfRun(state: string | null, run: string): { kind: "done" | "running"; number: number } | null {
  const [stateRun, kind, value, ...rest] = (state ?? "").trim().split(" ");
  if (stateRun !== run || (kind !== "done" && kind !== "running") || rest.length > 0) return null;
  return /^[0-9]{1,10}$/.test(value ?? "") ? { kind, number: Number(value) } : null;
}

/**
 * What the start makes of the state file's text (`null`: no file) and the
 * install's own "done" record (lifecycle/install-done.ts) after waiting
 * `waitedMs`.
 */
export function judgeInstallState(
  state: string | null,
  run: string,
  opts: { done: string | null; alive: (pid: number) => boolean; waitedMs: number; name: string; installLog: string },
): InstallVerdict {
  if (installDoneFor(opts.done, run)) return { kind: "done" };
  const see = `see the "${opts.name}: Install Script" log in the Coder dashboard, or ${opts.installLog}`;
  const ours = stateOfRun(state, run);
  if (ours?.kind === "done")
    return ours.number === 0
      ? { kind: "done" }
      : {
          kind: "failed",
          message: `${see}: the install script failed (exit ${ours.number}), so ${opts.name} is not started.`,
        };
  if (ours?.kind === "running")
    return opts.alive(ours.number)
      ? { kind: "wait" }
      : {
          kind: "gone",
          message: `${see}: the install script ended before it finished, so ${opts.name} is not started.`,
        };
  return opts.waitedMs < INSTALL_BEGIN_MS
    ? { kind: "wait" }
    : {
        kind: "failed",
        message: `restart the workspace: the install script did not begin within ${INSTALL_BEGIN_MS / 1000} s of this start, so ${opts.name} is not started.`,
      };
}

/**
 * Resolves once the install of agent run `run` has ended well; throws, with
 * the fix first, when it failed, died, or never began. Woken by the module
 * folder's changes where the folder can be watched (the rename that ends the
 * install), a change made while the file is read included, and every 50 ms
 * regardless, which is what notices a dead install.
 */
export async function waitForInstall(dir: string, run: string, name: string): Promise<void> {
  const file = path.join(dir, "install.state");
  const installLog = path.join(dir, "logs", "install.log");
  const began = Date.now();
  const read = () => readTextOrNull(file);
  // No folder yet (the install makes it), or no inotify: the 50 ms steps alone.
  const changes = watchFolders([dir]);
  let announced = false;
  try {
    await pollUntil(
      async () => {
        const done = readInstallDone(dir);
        const state = read();
        const ours = stateOfRun(state, run);
        // A zombie, which the agent has not reaped yet, is gone too.
        const live = ours?.kind === "running" && (await isRunning(ours.number));
        const verdict = judgeInstallState(state, run, {
          done,
          alive: () => live,
          waitedMs: Date.now() - began,
          name,
          installLog,
        });
        if (verdict.kind === "done") return true;
        if (verdict.kind === "failed") throw new StepError(verdict.message);
        // Gone, and the file not rewritten since it was read: the install
        // writes "done" before it exits, so it ended without saying how.
        if (verdict.kind === "gone" && read() === state) throw new StepError(verdict.message);
        if (!announced) log("waiting for the install script");
        announced = true;
        return undefined;
      },
      {
        // An install that runs is waited for however long it takes (a first
        // boot downloads Node.js, AgentAPI and Goose); its own steps are bounded.
        timeoutMs: Number.POSITIVE_INFINITY,
        intervalMs: 50,
        wait: (ms) => changes.wait(ms),
      },
    );
  } finally {
    changes.close();
  }
}

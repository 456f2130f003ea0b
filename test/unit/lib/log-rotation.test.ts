// AgentAPI's and the supervisor's logs are rotated by the supervisor alone
// (supervisor.sh, bound_log), while they are written and at its first look
// after a launch, so they cannot fill the home volume that also holds Goose's
// sessions and the chat.

import { spawn } from "node:child_process";
import { closeSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openLog } from "../../../src/lib/command-log.js";
import { pollUntil } from "../../../src/lib/poll.js";
import { signal } from "../../../src/lib/processes.js";
import type { ModulePaths } from "../../../src/settings/config.js";
import { spawnSupervisor, supervisorLog } from "../../../src/supervisor/process.js";
import { readText, scratchFolders } from "../scratch.js";

const SUPERVISOR_SH = path.join(import.meta.dirname, "../../../src/supervisor/supervisor.sh");

const fresh = scratchFolders("log-rotation-test");

describe("the logs that live as long as the workspace", () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) signal(pid, "SIGKILL");
  });

  /**
   * The texts of `log` and its generations once `quiet` exists (the writer is
   * done) and two looks in a row agree; a look while a rotation moves them
   * does not count.
   */
  async function settled(log: string, quiet: string): Promise<string[]> {
    const snapshot = async () => {
      const dir = path.dirname(log);
      const names = (await readdir(dir)).filter((name) => name.startsWith(path.basename(log))).sort();
      const texts = await Promise.all(names.map((name) => readText(path.join(dir, name)).catch(() => null)));
      return texts.includes(null) ? undefined : { names, texts: texts as string[] };
    };
    let last = "";
    const found = await pollUntil(
      async () => {
        const now = await snapshot();
        const key = JSON.stringify(now);
        const same = key === last;
        last = key;
        const done = await readText(quiet).then(
          () => true,
          () => false,
        );
        return now !== undefined && same && done ? now : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    expect("value" in found).toBe(true);
    const { names, texts } = (found as { value: { names: string[]; texts: string[] } }).value;
    // At least one rotation, and never more generations than the limit.
    const base = path.basename(log);
    expect(names).toContain(`${base}.1`);
    expect([base, `${base}.1`, `${base}.2`, `${base}.3`]).toEqual(expect.arrayContaining(names));
    return texts;
  }

  // The writers fork a sleep per line; on a busy machine that alone outlasts vitest's default 5 s.
  const WRITER_BOUND_MS = 90_000;

  /** 400 lines of 201 bytes, then `quiet` is created; `after` runs next. */
  const noisy = (quiet: string, after: string) =>
    `i=0; while [ $i -lt 400 ]; do printf "%0200d\\n" $i; i=$((i+1)); sleep 0.005; done; : > '${quiet}'; ${after}`;

  /** The sh supervisor, its PID file claimed for it, with the inputs the start gives it and `env`. */
  async function supervisor(paths: ModulePaths, env: NodeJS.ProcessEnv): Promise<number> {
    const pid = await spawnSupervisor({
      paths,
      source: await readFile(SUPERVISOR_SH, "utf8"),
      env: {
        PATH: process.env.PATH,
        GOOSE_MODULE_SESSIONS_DB: "",
        GOOSE_MODULE_SUPERVISOR_PID: paths.supervisorPid,
        GOOSE_MODULE_SUPERVISOR_LOG: supervisorLog(paths),
        GOOSE_MODULE_LOG_MAX_BYTES: String(CAP),
        GOOSE_MODULE_LOG_GENERATIONS: "3",
        ...env,
      },
    });
    started.push(pid);
    await writeFile(paths.supervisorPid, `${pid}\n`);
    return pid;
  }

  /** Stands in for AgentAPI: `script`'s output appended to the log the launch opened; its PID file written. */
  async function writer(paths: ModulePaths, script: string): Promise<string> {
    const logFile = path.join(paths.logs, "agentapi.log");
    const out = openLog(logFile);
    const child = spawn("/bin/sh", ["-c", script], { stdio: ["ignore", out, out] });
    closeSync(out);
    started.push(child.pid as number);
    const pidFile = path.join(paths.dir, "agentapi.pid");
    await writeFile(pidFile, `${child.pid}\n`);
    return pidFile;
  }

  const CAP = 4096;

  async function moduleFolder(): Promise<ModulePaths> {
    const dir = await fresh();
    const at = (name: string) => path.join(dir, name);
    const paths = { dir, logs: at("logs"), supervisorPid: at("supervisor.pid") } as ModulePaths;
    await mkdir(paths.logs);
    return paths;
  }

  // Past firstGeneration's wait.
  const FIRST_LOOK_BOUND_MS = 40_000;

  /** A log an earlier run left over the cap. */
  const OLD_RUN = `old run\n${"x".repeat(5000)}\n`;

  /** The first generation once the supervisor has made one. */
  async function firstGeneration(log: string): Promise<string> {
    const found = await pollUntil(async () => (await readText(`${log}.1`).catch(() => "")) || undefined, {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    expect("value" in found).toBe(true);
    return (found as { value: string }).value;
  }

  it(
    "logs/agentapi.log left full by an earlier run: the launch appends to it, the supervisor rotates it at its first look",
    async () => {
      const paths = await moduleFolder();
      const logFile = path.join(paths.logs, "agentapi.log");
      await writeFile(logFile, OLD_RUN);
      const pidFile = await writer(paths, "echo new run; exec sleep 600");
      await supervisor(paths, { GOOSE_MODULE_AGENTAPI_PID_FILE: pidFile, GOOSE_MODULE_AGENTAPI_LOG: logFile });
      expect((await firstGeneration(logFile)).startsWith(OLD_RUN)).toBe(true);
      expect((await readText(logFile)).length).toBeLessThan(CAP);
    },
    FIRST_LOOK_BOUND_MS,
  );

  it(
    "logs/supervisor.log left full by an earlier run: the supervisor rotates its own log at its first look",
    async () => {
      const paths = await moduleFolder();
      await writeFile(supervisorLog(paths), OLD_RUN);
      const pidFile = await writer(paths, "exec sleep 600");
      await supervisor(paths, { GOOSE_MODULE_AGENTAPI_PID_FILE: pidFile });
      expect((await firstGeneration(supervisorLog(paths))).startsWith(OLD_RUN)).toBe(true);
      expect((await readText(supervisorLog(paths))).length).toBeLessThan(CAP);
    },
    FIRST_LOOK_BOUND_MS,
  );

  it(
    "logs/agentapi.log stays bounded while AgentAPI runs: the supervisor rotates it under the running writer",
    async () => {
      const paths = await moduleFolder();
      const quiet = path.join(paths.dir, "writer-quiet");
      const logFile = path.join(paths.logs, "agentapi.log");
      const pidFile = await writer(paths, noisy(quiet, "exec sleep 600"));
      await supervisor(paths, { GOOSE_MODULE_AGENTAPI_PID_FILE: pidFile, GOOSE_MODULE_AGENTAPI_LOG: logFile });

      const texts = await settled(logFile, quiet);
      // The writer wrote 80,400 bytes; the log and its three generations hold what
      // a quarter second between two looks adds at most to each, not all of it.
      expect(texts.join("").length).toBeLessThan(400 * 201);
      // Each generation holds a full log of the writer's lines; the live one may be empty.
      for (const text of texts.slice(1)) expect(text).toMatch(/^0{195}/);
    },
    WRITER_BOUND_MS,
  );

  it(
    "logs/supervisor.log stays bounded while the supervisor runs: it rotates its own log under itself and its helpers",
    async () => {
      const paths = await moduleFolder();
      const pidFile = await writer(paths, "exec sleep 600");
      // Stands in for the runtime: the autosave helper the supervisor starts
      // when it begins to watch writes the lines, to the supervisor's log.
      const quiet = path.join(paths.dir, "helper-quiet");
      const runtime = path.join(paths.dir, "runtime");
      await writeFile(runtime, `#!/bin/sh\n${noisy(quiet, "exit 0")}\n`, { mode: 0o700 });
      await supervisor(paths, {
        GOOSE_MODULE_AGENTAPI_PID_FILE: pidFile,
        GOOSE_MODULE_SESSIONS_DB: path.join(paths.dir, "sessions.db"),
        GOOSE_MODULE_RUNTIME: runtime,
        GOOSE_MODULE_RUNTIME_KIND: "node",
      });

      const texts = await settled(supervisorLog(paths), quiet);
      expect(texts.join("").length).toBeLessThan(400 * 201);
      for (const text of texts.slice(1)) expect(text).toMatch(/0{195}/);
    },
    WRITER_BOUND_MS,
  );
});

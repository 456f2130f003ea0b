import { mkdir, symlink, writeFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { commandPath, helperEnv, run } from "../../../src/lib/exec.js";
import { readText, scratchDir } from "../scratch.js";

const at = scratchDir("exec-test");
const sh = (script: string, opts?: Parameters<typeof run>[2]) => run("/bin/sh", ["-c", script], opts);
const exe = (file: string) => writeFile(file, "#!/bin/sh\n", { mode: 0o755 });

/**
 * True once the process is gone or a zombie nobody reaps (containers often
 * have no init that reaps), within 10 s: a loaded machine can take seconds.
 */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    const stat = await readText(`/proc/${pid}/stat`).catch(() => null);
    if (stat === null || /^\d+ \(.*\) Z/.test(stat)) return true;
    await delay(20);
  }
  return false;
}

describe("run", () => {
  it.each([
    ["exit 0", { code: 0 }],
    ["exit 3", { code: 3 }],
    ["echo out; echo err >&2", { code: 0, stdout: "out\n", stderr: "err\n", timedOut: false, truncated: false }],
    ["kill -TERM $$", { code: null, signal: "SIGTERM" }],
    // Stdin is closed, so a child that reads it gets end-of-file at once.
    ["cat; echo read-done", { code: 0, stdout: "read-done\n", timedOut: false }],
  ])("%j -> %j", async (script, want) => {
    expect(await sh(script, { timeoutMs: 10_000 })).toMatchObject(want);
  });

  it("passes arguments as data, never through a shell", async () => {
    const hostile = ["$(echo pwned)", "`id`", "a b", "'; exit 9", "$'\\t'", "\\", "*", "\n", ""];
    expect((await run("/usr/bin/printf", ["%s|", ...hostile])).stdout).toBe(`${hostile.join("|")}|`);
  });

  it("reports a program that cannot be started instead of throwing", async () => {
    expect(await run(at("no-such-program"), [])).toMatchObject({ code: null, error: expect.stringMatching(/ENOENT/) });
  });

  it("kills the whole process group on timeout", async () => {
    const started = Date.now();
    const result = await sh(`sleep 30 & echo $! > ${at("child.pid")}; sleep 30`, { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await gone(Number(await readText(at("child.pid"))))).toBe(true);
  });

  it("does not wait for a background child that keeps the pipes open, and ends it", async () => {
    const started = Date.now();
    const result = await sh("sleep 30 & echo $!", { timeoutMs: 20_000 });
    expect(result).toMatchObject({ code: 0, timedOut: false });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await gone(Number(result.stdout.trim()))).toBe(true);
  });

  it("bounds the output and stops a runaway writer", async () => {
    const result = await run("/usr/bin/yes", [], { maxBytes: 1000, timeoutMs: 20_000 });
    expect(result).toMatchObject({ truncated: true, timedOut: false });
    expect(Buffer.byteLength(result.stdout)).toBe(1000);
  });

  it("cuts output exactly at the limit, even when a chunk ends on it", async () => {
    const result = await sh("printf 1234; sleep 0.2; printf 5678", { maxBytes: 4 });
    expect(result).toMatchObject({ stdout: "1234", truncated: true });
  });

  it("is untouched by a user's ~/.bashrc and BASH_ENV, even for a bash script", async () => {
    await mkdir(at("home"));
    await writeFile(at("home", ".bashrc"), "echo from-bashrc\n");
    await writeFile(at("bash-env.sh"), "echo from-bash-env\nexit 1\n");
    await writeFile(at("wrapper.sh"), '#!/bin/bash\necho "{\\"ok\\":true}"\n', { mode: 0o755 });
    const env = { PATH: process.env.PATH, HOME: at("home"), BASH_ENV: at("bash-env.sh"), ENV: at("bash-env.sh") };
    expect(await run("/bin/echo", ["hello"], { env })).toMatchObject({ code: 0, stdout: "hello\n", stderr: "" });
    expect(await run(at("wrapper.sh"), [], { env })).toMatchObject({ code: 0, stdout: '{"ok":true}\n', stderr: "" });
  });

  it("runs in the given folder with the given environment", async () => {
    const result = await sh('pwd; echo "$ONLY_HERE"', { cwd: at(), env: { PATH: process.env.PATH, ONLY_HERE: "yes" } });
    expect(result.stdout).toBe(`${at()}\nyes\n`);
  });
});

it("helperEnv drops only the variables that make a shell read a startup file", () => {
  const env = { PATH: "/bin", BASH_ENV: "/x", ENV: "/y", HOME: "/h", EMPTY: "" };
  expect(helperEnv(env)).toEqual({ PATH: "/bin", HOME: "/h", EMPTY: "" });
});

describe("commandPath", () => {
  it("walks PATH in order, returns the first executable regular file, and follows a symlink as exec does", async () => {
    const [a, b] = [at("path-a"), at("path-b")];
    await Promise.all([mkdir(a), mkdir(b)]);
    await writeFile(`${a}/tool`, "not executable\n", { mode: 0o644 });
    await mkdir(`${a}/other`);
    await Promise.all([exe(`${b}/tool`), exe(`${b}/other`)]);
    await symlink(`${b}/tool`, `${b}/linked`);
    for (const name of ["tool", "other", "linked"]) expect(await commandPath(name, `${a}:${b}`)).toBe(`${b}/${name}`);
    expect(await commandPath("missing", `${a}:${b}`)).toBeNull();
  });

  it("ignores empty and relative PATH entries", async () => {
    await mkdir(at("path-d"));
    await exe(at("path-d", "here"));
    const cwd = process.cwd();
    process.chdir(at("path-d"));
    try {
      expect(await commandPath("here", ":.:path-d")).toBeNull();
    } finally {
      process.chdir(cwd);
    }
  });

  it("takes a name with a slash as a path", async () => {
    expect(await commandPath("/bin/sh", "")).toBe("/bin/sh");
    expect(await commandPath(at("nope"), "/bin")).toBeNull();
    expect(await commandPath("", "/bin")).toBeNull();
  });
});

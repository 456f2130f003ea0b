import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandPath, helperEnv, run } from "../../../src/lib/exec.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "exec-test-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** True once the process is gone or a zombie nobody reaps (containers often have no init that reaps). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
    if (stat === null || /^\d+ \(.*\) Z/.test(stat)) return true;
    await delay(20);
  }
  return false;
}

describe("run", () => {
  it("reports exit codes", async () => {
    expect((await run("/bin/sh", ["-c", "exit 0"])).code).toBe(0);
    expect((await run("/bin/sh", ["-c", "exit 3"])).code).toBe(3);
  });

  it("keeps stdout and stderr apart", async () => {
    const result = await run("/bin/sh", ["-c", "echo out; echo err >&2"]);
    expect(result).toMatchObject({ code: 0, stdout: "out\n", stderr: "err\n", timedOut: false, truncated: false });
  });

  it("passes arguments as data, never through a shell", async () => {
    const hostile = ["$(echo pwned)", "`id`", "a b", "'; exit 9", "$'\\t'", "\\", "*", "\n", ""];
    const result = await run("/usr/bin/printf", ["%s|", ...hostile]);
    expect(result.stdout).toBe(`${hostile.join("|")}|`);
  });

  it("reports a signal death with a null code", async () => {
    const result = await run("/bin/sh", ["-c", "kill -TERM $$"]);
    expect(result).toMatchObject({ code: null, signal: "SIGTERM" });
  });

  it("reports a program that cannot be started instead of throwing", async () => {
    const result = await run(path.join(dir, "no-such-program"), []);
    expect(result.code).toBeNull();
    expect(result.error).toMatch(/ENOENT/);
  });

  it("kills the whole process group on timeout", async () => {
    const pidFile = path.join(dir, "timeout-child.pid");
    const started = Date.now();
    const result = await run("/bin/sh", ["-c", `sleep 30 & echo $! > ${pidFile}; sleep 30`], { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await gone(Number(await readFile(pidFile, "utf8")))).toBe(true);
  });

  it("does not wait for a background child that keeps the pipes open, and ends it", async () => {
    const started = Date.now();
    const result = await run("/bin/sh", ["-c", "sleep 30 & echo $!"], { timeoutMs: 20_000 });
    expect(result).toMatchObject({ code: 0, timedOut: false });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await gone(Number(result.stdout.trim()))).toBe(true);
  });

  it("bounds the output and stops a runaway writer", async () => {
    const result = await run("/usr/bin/yes", [], { maxBytes: 1000, timeoutMs: 20_000 });
    expect(result.truncated).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(Buffer.byteLength(result.stdout)).toBe(1000);
  });

  it("cuts output exactly at the limit, even when a chunk ends on it", async () => {
    const result = await run("/bin/sh", ["-c", "printf 1234; sleep 0.2; printf 5678"], { maxBytes: 4 });
    expect(result.stdout).toBe("1234");
    expect(result.truncated).toBe(true);
  });

  it("closes stdin, so a child that reads it gets end-of-file at once", async () => {
    const started = Date.now();
    const result = await run("/bin/sh", ["-c", "cat; echo read-done"], { timeoutMs: 10_000 });
    expect(result).toMatchObject({ code: 0, stdout: "read-done\n", timedOut: false });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("is untouched by a user's ~/.bashrc and BASH_ENV, even for a bash script", async () => {
    const home = path.join(dir, "home");
    await mkdir(home, { recursive: true });
    await writeFile(path.join(home, ".bashrc"), "echo from-bashrc\n");
    const bashEnv = path.join(dir, "bash-env.sh");
    await writeFile(bashEnv, "echo from-bash-env\nexit 1\n");
    const script = path.join(dir, "wrapper.sh");
    await writeFile(script, '#!/bin/bash\necho "{\\"ok\\":true}"\n', { mode: 0o755 });
    const env = { PATH: process.env.PATH, HOME: home, BASH_ENV: bashEnv, ENV: bashEnv };

    const direct = await run("/bin/echo", ["hello"], { env });
    expect(direct).toMatchObject({ code: 0, stdout: "hello\n", stderr: "" });

    const wrapped = await run(script, [], { env });
    expect(wrapped).toMatchObject({ code: 0, stdout: '{"ok":true}\n', stderr: "" });
    expect(JSON.parse(wrapped.stdout)).toEqual({ ok: true });
  });

  it("runs in the given folder with the given environment", async () => {
    const result = await run("/bin/sh", ["-c", 'pwd; echo "$ONLY_HERE"'], {
      cwd: dir,
      env: { PATH: process.env.PATH, ONLY_HERE: "yes" },
    });
    expect(result.stdout).toBe(`${dir}\nyes\n`);
  });
});

describe("helperEnv", () => {
  it("drops only the variables that make a shell read a startup file", () => {
    expect(helperEnv({ PATH: "/bin", BASH_ENV: "/x", ENV: "/y", HOME: "/h", EMPTY: "" })).toEqual({
      PATH: "/bin",
      HOME: "/h",
      EMPTY: "",
    });
  });
});

describe("commandPath", () => {
  it("walks PATH in order and returns the first executable regular file", async () => {
    const a = path.join(dir, "path-a");
    const b = path.join(dir, "path-b");
    await mkdir(a, { recursive: true });
    await mkdir(b, { recursive: true });
    await writeFile(path.join(a, "tool"), "not executable\n", { mode: 0o644 });
    await mkdir(path.join(a, "other"));
    await writeFile(path.join(b, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    await writeFile(path.join(b, "other"), "#!/bin/sh\n", { mode: 0o755 });
    expect(await commandPath("tool", `${a}:${b}`)).toBe(path.join(b, "tool"));
    expect(await commandPath("other", `${a}:${b}`)).toBe(path.join(b, "other"));
    expect(await commandPath("missing", `${a}:${b}`)).toBeNull();
  });

  it("follows a symlink to an executable, as exec does", async () => {
    const c = path.join(dir, "path-c");
    await mkdir(c, { recursive: true });
    await writeFile(path.join(c, "real"), "#!/bin/sh\n", { mode: 0o755 });
    await symlink(path.join(c, "real"), path.join(c, "linked"));
    expect(await commandPath("linked", c)).toBe(path.join(c, "linked"));
  });

  it("ignores empty and relative PATH entries", async () => {
    const d = path.join(dir, "path-d");
    await mkdir(d, { recursive: true });
    await writeFile(path.join(d, "here"), "#!/bin/sh\n");
    await chmod(path.join(d, "here"), 0o755);
    const cwd = process.cwd();
    process.chdir(d);
    try {
      expect(await commandPath("here", ":.:path-d")).toBeNull();
    } finally {
      process.chdir(cwd);
    }
  });

  it("takes a name with a slash as a path", async () => {
    expect(await commandPath("/bin/sh", "")).toBe("/bin/sh");
    expect(await commandPath(path.join(dir, "nope"), "/bin")).toBeNull();
    expect(await commandPath("", "/bin")).toBeNull();
  });
});

import { readFile, stat, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { installedVersion } from "../../../src/install/install.js";
import { runUserScript } from "../../../src/install/user-scripts.js";
import { scratchPaths } from "../scratch.js";

const folder = scratchPaths("user-scripts-test");
let at: Awaited<ReturnType<typeof folder>>;
let dir: string;
const PATH = "/usr/bin:/bin";
beforeAll(async () => {
  at = await folder();
  dir = at();
});

describe("runUserScript", () => {
  const opts = () => ({ scriptsDir: dir, logsDir: dir, cwd: dir, env: { PATH }, shell: "/bin/sh" });

  it("writes the script 0700 and a fresh log 0600, and runs it", async () => {
    await writeFile(at("pre_install.log"), "stale\n");
    await runUserScript("pre_install", "echo installing\n", opts());
    expect((await stat(at("pre_install.sh"))).mode & 0o777).toBe(0o700);
    expect((await stat(at("pre_install.log"))).mode & 0o777).toBe(0o600);
    expect(await readFile(at("pre_install.log"), "utf8")).toBe("installing\n");
  });

  it("stops the start with the log's tail when the script fails", async () => {
    await expect(runUserScript("post_install", "echo broken >&2\nexit 3\n", opts())).rejects.toThrow(
      /post_install_script exited 3[\s\S]*broken/,
    );
  });
});

describe("installedVersion", () => {
  it("reads the version a binary prints, without a shell", async () => {
    const bin = at("fake-goose");
    await writeFile(bin, "#!/bin/sh\necho ' 1.47.0'\n", { mode: 0o755 });
    expect(await installedVersion(bin, { PATH })).toBe("1.47.0");
  });

  it("answers null for a binary that fails or is missing", async () => {
    const bin = at("broken");
    await writeFile(bin, "#!/bin/sh\necho 1.0.0\nexit 1\n", { mode: 0o755 });
    expect(await installedVersion(bin, { PATH })).toBeNull();
    expect(await installedVersion(at("missing"), { PATH })).toBeNull();
  });

  it("runs the binary, which may be an unverified download, without the agent's token or the provider's keys", async () => {
    const bin = at("env-recording");
    const seen = at("env-seen");
    await writeFile(bin, `#!/bin/sh\nenv > '${seen}'\necho 'agentapi version 0.12.2'\n`, { mode: 0o755 });
    const coder = { CODER_AGENT_TOKEN: "agent-token-secret", CODER_AGENT_URL: "https://coder.example.com" };
    const env = { PATH, HOME: dir, ...coder, ANTHROPIC_API_KEY: "sk-ant-secret" };
    expect(await installedVersion(bin, env)).toBe("0.12.2");
    const lines = (await readFile(seen, "utf8")).split("\n");
    expect(lines.filter((line) => line.startsWith("CODER") || line.includes("secret"))).toEqual([]);
    expect(lines).toContain(`HOME=${dir}`);
  });
});

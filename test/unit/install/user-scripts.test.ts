import { stat, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runUserScript } from "../../../src/install/user-scripts.js";
import { askVersion } from "../../../src/install/version-memo.js";
import { readText, scratchDir } from "../scratch.js";

const at = scratchDir("user-scripts-test");
const PATH = "/usr/bin:/bin";

describe("runUserScript", () => {
  const opts = () => ({ scriptsDir: at(), logsDir: at(), cwd: at(), env: { PATH }, shell: "/bin/sh" });

  it("writes the script 0700 and a fresh log 0600, and runs it", async () => {
    await writeFile(at("pre_install.log"), "stale\n");
    await runUserScript("pre_install", "echo installing\n", opts());
    const modes = await Promise.all(["pre_install.sh", "pre_install.log"].map(async (f) => (await stat(at(f))).mode));
    expect(modes.map((m) => m & 0o777)).toEqual([0o700, 0o600]);
    expect(await readText(at("pre_install.log"))).toBe("installing\n");
  });

  it("stops the start with the log's tail when the script fails", async () => {
    await expect(runUserScript("post_install", "echo broken >&2\nexit 3\n", opts())).rejects.toThrow(
      /post_install_script exited 3[\s\S]*broken/,
    );
  });
});

describe("askVersion", () => {
  it.each([
    ["fake-goose", "echo ' 1.47.0'", "1.47.0"],
    ["broken", "echo 1.0.0\nexit 1", null],
  ])("reads the version %s prints, without a shell: %j", async (name, body, version) => {
    await writeFile(at(name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    expect((await askVersion(at(name), { PATH })).version).toBe(version);
    expect(await askVersion(at("missing"), { PATH })).toEqual({ version: null, output: null });
  });

  it("runs the binary, which may be an unverified download, without the agent's token or the provider's keys", async () => {
    const bin = at("env-recording");
    const seen = at("env-seen");
    await writeFile(bin, `#!/bin/sh\nenv > '${seen}'\necho 'agentapi version 0.12.2'\n`, { mode: 0o755 });
    const coder = { CODER_AGENT_TOKEN: "agent-token-secret", CODER_AGENT_URL: "https://coder.example.com" };
    const env = { PATH, HOME: at(), ...coder, ANTHROPIC_API_KEY: "sk-ant-secret" };
    expect((await askVersion(bin, env)).version).toBe("0.12.2");
    const lines = (await readText(seen)).split("\n");
    expect(lines.filter((line) => line.startsWith("CODER") || line.includes("secret"))).toEqual([]);
    expect(lines).toContain(`HOME=${at()}`);
  });
});

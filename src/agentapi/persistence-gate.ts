import { run } from "../lib/exec.js";
import { log, warn } from "../lib/log.js";
import { type DecidedGate, gateOnHelp, gateOnVersion } from "./version-gate.js";

async function printedVersion(binary: string): Promise<string | null> {
  const version = await run(binary, ["--version"], { timeoutMs: 20_000 });
  return version.code === 0 ? version.stdout : null;
}

/**
 * Asks the AgentAPI binary itself whether it can persist state: its
 * --version (`versionOutput` when the install step has just had it from this
 * binary), else its server --help.
 */
async function askBinary(binary: string, requested: boolean, versionOutput?: string): Promise<DecidedGate> {
  const printed = versionOutput ?? (await printedVersion(binary));
  const gate = gateOnVersion(requested, printed);
  if (gate.kind === "decided") return gate;
  const help = await run(binary, ["server", "--help"], { timeoutMs: 20_000 });
  return gateOnHelp(gate, help.code === 0 ? help.stdout + help.stderr : null);
}

/** Whether this launch persists the chat, said in the log with the reason. */
export async function decidePersistence(
  binary: string,
  requested: boolean,
  versionOutput?: string,
): Promise<DecidedGate> {
  const gate = await askBinary(binary, requested, versionOutput);
  log(`state persistence ${gate.enabled ? "on" : "off"}: ${gate.reason}`);
  if (gate.warning) warn(gate.warning);
  return gate;
}

// AgentAPI logs an agent that exited with an error as "agent exited with
// error:", with the agent's last screen between two "========" lines
// (runServer in cmd/server/server.go, coder/agentapi @ v0.12.1), after the
// "--- <time> <command>" line the module writes before each launch.
const LAUNCH_HEADER = "\n--- ";
const EXIT_LINE = "agent exited with error";
const SCREEN = /={8,}\n([\s\S]*?)\n\s*={8,}/;

/**
 * What the agent showed when it exited with an error during the last launch
 * in AgentAPI's log, on one line and at most `max` characters (its end, where
 * the error is); null when that launch logged no such exit.
 */
export function lastAgentScreen(logText: string, max = 300): string | null {
  const launch = logText.slice(Math.max(0, logText.lastIndexOf(LAUNCH_HEADER)));
  const at = launch.lastIndexOf(EXIT_LINE);
  if (at === -1) return null;
  const screen = SCREEN.exec(launch.slice(at))?.[1];
  if (screen === undefined) return null;
  const flat = screen.split(/\s+/).filter(Boolean).join(" ");
  if (flat === "") return null;
  return flat.length > max ? `…${flat.slice(flat.length - max + 1)}` : flat;
}

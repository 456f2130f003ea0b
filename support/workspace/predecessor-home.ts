// A home folder as the registry's coder/goose 3.0.1 left it, written from the
// shapes described in coder/registry at release/coder/goose/v3.0.1
// (registry/coder/modules/goose/main.tf and scripts/install.sh; the module
// folder from registry/coder/modules/agentapi/scripts/main.sh at
// release/coder/agentapi/v2.0.0): what its start wrote, byte for byte, with
// the permissions a shell under umask 022 gives.
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

export interface PredecessorTemplate {
  provider: string;
  model: string;
  /** additional_extensions as the template author wrote it (a heredoc: YAML, ending in a newline), or undefined. */
  additionalExtensions?: string;
  /** GOOSE_SYSTEM_PROMPT on coder_agent.env, or undefined. */
  systemPrompt?: string;
  /** GOOSE_TASK_PROMPT on coder_agent.env, or undefined. */
  taskPrompt?: string;
}

/** 3.0.1's README example: the desktop-commander extension, as the heredoc reads after `<<-EOT` strips its indent. */
export const DESKTOP_COMMANDER = `desktop-commander:
  args: []
  cmd: desktop-commander
  description: Ideal for background tasks
  enabled: true
  envs: {}
  name: desktop-commander
  timeout: 300
  type: stdio
`;

/** 3.0.1's README system prompt, as the `<<-EOT` heredoc on coder_agent.env reads. */
export const README_SYSTEM_PROMPT = `You are a helpful assistant that can help write code.

Run all long running tasks (e.g. npm run dev) in the background and not in the foreground.

Periodically check in on background tasks.

Notify Coder of the status of the task before and after your steps.
`;

/**
 * config.yaml as 3.0.1's install.sh left it: the provider and model lines,
 * then its fixed extensions block and the additional extensions, each line
 * indented two spaces, and the one newline `echo` adds.
 */
export function predecessorConfigYaml(t: PredecessorTemplate): string {
  const lines = [
    `GOOSE_PROVIDER: ${t.provider}`,
    `GOOSE_MODEL: ${t.model}`,
    "extensions:",
    "  coder:",
    "    args:",
    "    - exp",
    "    - mcp",
    "    - server",
    "    cmd: coder",
    "    description: Report ALL tasks and statuses (in progress, done, failed) you are working on.",
    "    enabled: true",
    "    envs:",
    "      CODER_MCP_APP_STATUS_SLUG: goose",
    "      CODER_MCP_AI_AGENTAPI_URL: http://localhost:3284",
    "    name: Coder",
    "    timeout: 3000",
    "    type: stdio",
    "  developer:",
    "    display_name: Developer",
    "    enabled: true",
    "    name: developer",
    "    timeout: 300",
    "    type: builtin",
  ];
  if (t.additionalExtensions !== undefined)
    for (const line of t.additionalExtensions.trim().split("\n")) lines.push(`  ${line}`);
  return `${lines.join("\n")}\n`;
}

/** .goosehints as install.sh left it: `echo "$GOOSE_SYSTEM_PROMPT"`. */
export function predecessorHints(systemPrompt: string): string {
  return `${systemPrompt}\n`;
}

export interface PredecessorFiles {
  configFile: string;
  hintsFile: string | null;
  moduleFolder: string;
}

/** Writes what a workspace that ran 3.0.1 with `t` holds under `home`. */
export async function writePredecessorHome(home: string, t: PredecessorTemplate): Promise<PredecessorFiles> {
  const gooseDir = path.join(home, ".config", "goose");
  const moduleFolder = path.join(home, ".goose-module");
  await mkdir(gooseDir, { recursive: true, mode: 0o755 });
  await mkdir(path.join(moduleFolder, "scripts"), { recursive: true, mode: 0o755 });
  const files: Array<[string, string, number]> = [
    [path.join(gooseDir, "config.yaml"), predecessorConfigYaml(t), 0o644],
    [path.join(moduleFolder, "install.sh"), "#!/bin/bash\necho installing goose\n", 0o755],
    [path.join(moduleFolder, "install.log"), "Installing Goose...\nGoose installed\n", 0o644],
    [path.join(moduleFolder, "agentapi-start.log"), "Starting without a prompt\n", 0o644],
    [path.join(moduleFolder, "scripts", "agentapi-start.sh"), "#!/bin/bash\nagentapi server -- goose\n", 0o755],
    [path.join(moduleFolder, "scripts", "agentapi-wait-for-start.sh"), "#!/bin/bash\nexit 0\n", 0o755],
  ];
  const hintsFile = t.systemPrompt ? path.join(gooseDir, ".goosehints") : null;
  if (hintsFile !== null) files.push([hintsFile, predecessorHints(t.systemPrompt as string), 0o644]);
  if (t.taskPrompt)
    files.push([
      path.join(moduleFolder, "prompt.txt"),
      `Review your goosehints. Every step of the way, report tasks to Coder with proper descriptions and statuses. Your task at hand: ${t.taskPrompt}`,
      0o644,
    ]);
  for (const [file, text, mode] of files) {
    await writeFile(file, text);
    await chmod(file, mode);
  }
  return { configFile: files[0]?.[0] as string, hintsFile, moduleFolder };
}

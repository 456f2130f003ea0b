import { writeFileAtomic } from "../lib/atomic-write.js";
import { log } from "../lib/log.js";
import type { StartMode } from "./commands.js";

/**
 * The task prompt reaches Goose once, as the --instructions file of a new
 * session (buildGooseArgs says why). A resumed session already holds it, so a
 * warm start writes nothing. Returns the file for Goose, or null.
 */
export async function writePromptFile(file: string, prompt: string, mode: StartMode): Promise<string | null> {
  if (prompt.trim() === "") return null;
  if (mode === "warm") {
    log("first prompt not sent again: the resumed session already holds the conversation");
    return null;
  }
  await writeFileAtomic(file, prompt, { mode: 0o600 });
  log(`first prompt (${prompt.length} characters) goes to the new session via ${file}`);
  return file;
}

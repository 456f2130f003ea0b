import { statfs } from "node:fs/promises";
import path from "node:path";

// Below this, AgentAPI cannot write even a short chat.
const FULL_BELOW_BYTES = 64 * 1024;

/** A sentence for the log when the disk holding `file` is full, else null. */
export async function diskFullNote(file: string): Promise<string | null> {
  try {
    const fs = await statfs(path.dirname(file));
    const free = Number(fs.bavail) * Number(fs.bsize);
    if (free >= FULL_BELOW_BYTES) return null;
    return `the disk holding ${path.dirname(file)} is full (${free} bytes free), so the chat cannot be written; free some space in the workspace`;
  } catch {
    return null;
  }
}

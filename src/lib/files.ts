import { readFile } from "node:fs/promises";

/** A file's text, or null when it does not exist; any other failure is an error worth reporting. */
export async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

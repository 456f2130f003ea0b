import path from "node:path";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { readTextOrNull } from "../lib/files.js";

// The install's Node.js part says, as its last step, that the install of this
// agent run went well: "<agent run> done", in a file of its own. The start
// acts on that, not on the wrapper's "done 0" in install.state, which comes
// only once Node.js has exited (the kernel takes 3 to 4 ms to tear down its
// memory) and the wrapper has written it (two more programs). install.state
// stays the wrapper's, and says how an install that did not get here ended.

export function installDoneFile(dir: string): string {
  return path.join(dir, "install.done");
}

/** Records that the install of agent run `run` went well. */
export async function recordInstallDone(dir: string, run: string): Promise<void> {
  await writeFileAtomic(installDoneFile(dir), `${run} done\n`, { mode: 0o600 });
}

/** Whether the install of agent run `run` recorded that it went well. */
export function installDoneFor(text: string | null, run: string): boolean {
  return text === `${run} done\n`;
}

export function readInstallDone(dir: string): string | null {
  return readTextOrNull(installDoneFile(dir));
}

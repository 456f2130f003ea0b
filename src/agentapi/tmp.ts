import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { ensurePrivateDir } from "../lib/private-dirs.js";

// AgentAPI makes this folder for chat uploads with os.MkdirTemp("",
// "agentapi-uploads-") when it starts, under $TMPDIR, and never removes it
// (lib/httpapi/server.go NewServer, coder/agentapi @ v0.12.2).
const UPLOADS_PREFIX = "agentapi-uploads-";

/**
 * Makes AgentAPI's private TMPDIR ready and empties it of the upload folders
 * earlier runs left. Called under the lifecycle lock with no AgentAPI of this
 * module folder running, so none of them is in use. fs.rm removes a link
 * itself, never what it points to.
 */
export async function prepareAgentapiTmp(dir: string): Promise<void> {
  await ensurePrivateDir(dir);
  for (const name of readdirSync(dir)) {
    if (name.startsWith(UPLOADS_PREFIX)) rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

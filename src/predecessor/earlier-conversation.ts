// The conversation coder/goose 3.x left in the folder Goose works in, which
// the first start after it names in its log (and does not resume).
import { activity, byActivity, type ListedSession, messagesOf } from "../goose/session-records.js";
import { resolvedPath } from "../lib/files.js";
import { log } from "../lib/log.js";
import { predecessorRan } from "./config-files.js";

/** A session a predecessor module left, as the start log names it. */
export interface EarlierSession {
  id: string;
  name: string;
  messages: number;
  lastActive: string;
}

/**
 * The start log's note about the predecessor's last conversation, which a
 * start does not resume: Goose's CLI has no way to rename a session (`--name`
 * and `--session-id` are one argument group), and a resumed session loads the
 * extensions saved in it (EnabledExtensionsState::for_session,
 * crates/goose/src/session/extension_data.rs at v1.46.1), which would bring
 * back the 3.0.1 entries the module's own settings replace.
 */
export function describeEarlierConversation(earlier: EarlierSession, sessionName: string): string {
  const name = earlier.name === "" ? "" : ` "${earlier.name}"`;
  return `coder/goose 3.x ran here before: its last conversation is Goose session ${earlier.id}${name} (${earlier.messages} message(s), last active ${earlier.lastActive}); the module does not resume it as "${sessionName}", because Goose cannot rename a session and a resumed session keeps the extensions 3.x saved in it; to open it in a terminal: goose session --resume --session-id ${earlier.id}`;
}

/**
 * The newest conversation coder/goose 3.0.1 could have left in `folder` (its
 * resolved path, as Goose stores working_dir): 3.0.1 ran a bare `goose` or
 * `goose run` without `--name` in the folder at every start, so its sessions
 * are user sessions whose name Goose chose ("CLI Session", or a name Goose
 * generated from the first messages: user_set_name false). Sessions without a
 * message hold nothing to continue. Null when there is none.
 */
export function findEarlierConversation(sessions: ListedSession[], folder: string): EarlierSession | null {
  const candidates = sessions
    .filter((s) => s.session_type === "user" && s.user_set_name !== true && s.working_dir === folder)
    .filter((s) => typeof s.id === "string" && messagesOf(s) > 0)
    .sort(byActivity);
  const newest = candidates[0];
  if (!newest) return null;
  return {
    id: String(newest.id),
    name: typeof newest.name === "string" ? newest.name : "",
    messages: messagesOf(newest),
    lastActive: activity(newest),
  };
}

/**
 * On the first start after coder/goose 3.x (its folder in HOME, no session
 * with the module's name yet), names the conversation 3.x left in the folder
 * and how to open it. It reads the list the probe already has: no Goose
 * process of its own, and none at all once the module's session exists.
 */
export async function noteEarlierConversation(
  sessions: ListedSession[],
  home: string,
  folder: string,
  name: string,
): Promise<void> {
  if (!(await predecessorRan(home))) return;
  const earlier = findEarlierConversation(sessions, await resolvedPath(folder));
  if (earlier) log(describeEarlierConversation(earlier, name));
}

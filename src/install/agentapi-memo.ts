import { rm } from "node:fs/promises";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { fileIdentity, parseIdentity, readOptional, sameIdentity } from "../lib/files.js";
import { Fields } from "../lib/json-fields.js";

// What `agentapi --version` printed, remembered by the binary's identity
// (device, inode, size, modification and change times), so the start's
// version gate asks no second time. Written by the install script alone, read
// by the start alone. A replaced or touched binary has another identity (its
// change time is the kernel's, which no user can set), and the start then asks
// the binary itself.

/** Remembers `output` for the binary now at `bin`; forgets any answer when there is none. */
export async function rememberAgentapiVersion(file: string, bin: string, output: string | undefined): Promise<void> {
  const identity = await fileIdentity(bin, true);
  if (output === undefined || identity.kind !== "file") {
    await rm(file, { force: true });
    return;
  }
  await writeFileAtomic(file, `${JSON.stringify({ bin, identity, output })}\n`, { mode: 0o600 });
}

/** The remembered answer when the binary at `bin` is still the one that gave it. */
export async function rememberedAgentapiVersion(file: string, bin: string): Promise<string | undefined> {
  try {
    const text = await readOptional(file);
    if (text === null) return undefined;
    const memo = Fields.of(JSON.parse(text), "agentapi version memo");
    const now = await fileIdentity(bin, true);
    if (memo.string("bin") !== bin || now.kind !== "file" || !sameIdentity(parseIdentity(memo.object("identity")), now))
      return undefined;
    return memo.string("output");
  } catch {
    return undefined;
  }
}

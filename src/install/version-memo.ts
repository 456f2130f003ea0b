import { rmSync } from "node:fs";
import { parseVersionOutput } from "../agentapi/version-gate.js";
import { writeFileAtomic } from "../lib/atomic-write.js";
import { run } from "../lib/exec.js";
import { type FileIdentity, fileIdentity, parseIdentity, readOptional, sameIdentity } from "../lib/files.js";
import { Fields } from "../lib/json-fields.js";
import { minimalEnv } from "../lib/minimal-env.js";

// What each binary the install asked printed for `--version`, remembered by
// the binary's identity (device, inode, size, modification and change times),
// so neither the next install nor the start's version gate asks the same file
// again. Written by the install script alone, as it ends. A replaced or
// touched binary has another identity (its change time is the kernel's, which
// no user can set), and is asked again. The answer decides no more than
// asking the file would: whoever can write this memo can write the binaries
// in the home folder too, and a pinned binary's SHA-256 is still checked
// before its answer counts (install/install.ts).

export interface VersionAnswer {
  bin: string;
  identity: FileIdentity;
  output: string;
}

/** The answers remembered in `file`; none when it is missing or not the memo's shape. */
export async function readVersionMemo(file: string): Promise<VersionAnswer[]> {
  try {
    const text = await readOptional(file);
    if (text === null) return [];
    return Fields.of(JSON.parse(text), "version memo")
      .objectList("answers")
      .map((answer) => ({
        bin: answer.string("bin"),
        identity: parseIdentity(answer.object("identity")),
        output: answer.string("output"),
      }));
  } catch {
    return [];
  }
}

function answerOf(answers: VersionAnswer[], bin: string, identity: FileIdentity): string | undefined {
  const answer = answers.find((a) => a.bin === bin);
  return answer !== undefined && sameIdentity(answer.identity, identity) ? answer.output : undefined;
}

/** The answer remembered for `bin` when the file there is still the one that gave it. */
export async function recalledVersion(answers: VersionAnswer[], bin: string): Promise<string | undefined> {
  return answerOf(answers, bin, await fileIdentity(bin, true));
}

/**
 * What `binary --version` printed (null: it failed), and the version in it.
 * The binary may be a download nothing verified, so it runs with the minimal
 * environment: never the agent's token or the provider's keys.
 */
export async function askVersion(
  binary: string,
  env: NodeJS.ProcessEnv,
): Promise<{ version: string | null; output: string | null }> {
  const out = await run(binary, ["--version"], { env: minimalEnv(env), timeoutMs: 20_000 });
  return out.code === 0
    ? { version: parseVersionOutput(out.stdout), output: out.stdout }
    : { version: null, output: null };
}

/**
 * Asks binaries for their version as askVersion does, answering from the memo
 * for a file that answered before; keeps every answer with the identity its
 * file had when it gave it, for writeVersionMemo.
 */
export class VersionAsker {
  readonly answers: VersionAnswer[] = [];

  constructor(
    readonly held: VersionAnswer[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async ask(binary: string): Promise<{ version: string | null; output: string | null }> {
    const identity = await fileIdentity(binary, true);
    const known = answerOf(this.held, binary, identity);
    const got =
      known === undefined ? await askVersion(binary, this.env) : { version: parseVersionOutput(known), output: known };
    if (got.output !== null && identity.kind === "file") {
      const answer = { bin: binary, identity, output: got.output };
      const at = this.answers.findIndex((a) => a.bin === binary);
      if (at === -1) this.answers.push(answer);
      else this.answers[at] = answer;
    }
    return got;
  }

  /** The file that answered at `from` is now at `to`: this process renamed it, which changed its change time. */
  async renamed(from: string, to: string): Promise<void> {
    const answer = this.answers.find((a) => a.bin === from);
    if (answer === undefined) return;
    const identity = await fileIdentity(to, true);
    this.answers.splice(this.answers.indexOf(answer), 1);
    if (identity.kind === "file") this.answers.push({ bin: to, identity, output: answer.output });
  }
}

/**
 * Keeps `answers` (each with the identity its file had when it answered) of
 * the binaries that are still those files, in place of what `file` held;
 * nothing is written when that is what it held already.
 */
export async function writeVersionMemo(file: string, answers: VersionAnswer[], held: VersionAnswer[]): Promise<void> {
  const kept: VersionAnswer[] = [];
  for (const answer of answers)
    if (sameIdentity(answer.identity, await fileIdentity(answer.bin, true))) kept.push(answer);
  // In the order of their paths: the binaries are asked side by side.
  kept.sort((a, b) => (a.bin < b.bin ? -1 : a.bin > b.bin ? 1 : 0));
  const same = (a: VersionAnswer, b: VersionAnswer | undefined) =>
    b !== undefined && a.bin === b.bin && a.output === b.output && sameIdentity(a.identity, b.identity);
  if (kept.length === held.length && kept.every((answer, i) => same(answer, held[i]))) return;
  if (kept.length === 0) return void rmSync(file, { force: true });
  await writeFileAtomic(file, `${JSON.stringify({ answers: kept })}\n`, { mode: 0o600 });
}

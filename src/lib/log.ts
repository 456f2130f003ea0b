import { constants, openSync, rmSync, writeSync } from "node:fs";

// One line per event on stdout, which the Coder agent keeps as the script log.
const PREFIX = "goose-module:";

// The Coder agent stamps each line of a script's log itself; a long-running
// process that writes its own log file (the supervisor) stamps its lines.
let stamped = false;

export function stampLogLines(): void {
  stamped = true;
}

function line(message: string): string {
  return `${stamped ? `${new Date().toISOString()} ` : ""}${PREFIX} ${message}\n`;
}

// A copy of this run's lines in a file of the module folder (keepLogIn), and
// the lines written before the file could be opened (holdLogLines).
let copy: number | null = null;
let held: string[] | null = null;

function emit(stream: NodeJS.WriteStream, text: string): void {
  stream.write(text);
  const stampedText = stamped ? text : `${new Date().toISOString()} ${text}`;
  if (held !== null) held.push(stampedText);
  if (copy === null) return;
  try {
    writeSync(copy, stampedText);
  } catch {
    copy = null; // a full disk: the Coder agent's copy still has every line
  }
}

/** Keeps this run's lines from now on, for keepLogIn to write first: the folder it writes to may not exist yet. */
export function holdLogLines(): void {
  held = [];
}

/**
 * Keeps a copy of this run's lines, time-stamped, in `file`, as the
 * registry's coder-utils keeps each script's log under the module folder. A
 * new file each run: whatever is at the name (a link included) is removed,
 * never written through.
 */
export function keepLogIn(file: string): void {
  try {
    rmSync(file, { force: true });
    copy = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    for (const text of held ?? []) writeSync(copy, text);
  } catch (error) {
    copy = null;
    warn(`no copy of this log is kept in ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  } finally {
    held = null;
  }
}

export function log(message: string): void {
  emit(process.stdout, line(message));
}

export function warn(message: string): void {
  emit(process.stdout, line(`warning: ${message}`));
}

/** A failure whose message already says what failed and what to do. */
export class StepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StepError";
  }
}

export async function phase<T>(name: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await run();
  } finally {
    log(`phase ${name}: ${Date.now() - started} ms`);
  }
}

export function reportFatal(error: unknown): never {
  const message =
    error instanceof StepError ? error.message : `unexpected failure: ${(error as Error)?.stack ?? String(error)}`;
  emit(process.stderr, line(`error: ${message}`));
  process.exit(1);
}

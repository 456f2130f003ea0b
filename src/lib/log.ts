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

export function log(message: string): void {
  process.stdout.write(line(message));
}

export function warn(message: string): void {
  process.stdout.write(line(`warning: ${message}`));
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
  process.stderr.write(line(`error: ${message}`));
  process.exit(1);
}

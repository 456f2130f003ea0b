// One line per event on stdout, which the Coder agent keeps as the script log.
const PREFIX = "goose-module:";

export function log(message: string): void {
  process.stdout.write(`${PREFIX} ${message}\n`);
}

export function warn(message: string): void {
  process.stdout.write(`${PREFIX} warning: ${message}\n`);
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
  process.stderr.write(`${PREFIX} error: ${message}\n`);
  process.exit(1);
}

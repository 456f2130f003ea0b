// CLI for the model stub: prints its URL (the value for OPENAI_HOST) on one
// line of stdout, then serves until SIGINT or SIGTERM. Run it with
// support/model-stub/run.sh, which bundles this file with esbuild.
import { startModelStub } from "./server.js";

const USAGE = `Usage: support/model-stub/run.sh [--port N] [--model NAME] [--delay-ms MS] [--log FILE]

An OpenAI-compatible stand-in for a model provider on 127.0.0.1 (POST
/v1/chat/completions, streaming or not; GET /v1/models). Prints its URL, then
serves until interrupted. Point a real Goose at it with
  GOOSE_PROVIDER=openai GOOSE_MODEL=gpt-4o OPENAI_HOST=<url> OPENAI_API_KEY=anything

  --port N        port (default 0: any free port)
  --model NAME    model listed by GET /v1/models (default gpt-4o)
  --delay-ms MS   wait this long before each reply's text (default: env MODEL_STUB_DELAY_MS, else 0)
  --log FILE      append the JSONL request log to FILE (default: a temporary file, printed on stderr)`;

async function main(argv: string[]): Promise<number> {
  const opts: { port?: number; model?: string; delayMs?: number; logFile?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    const whole = (text: string) => {
      if (!/^[0-9]+$/.test(text)) throw new Error(`${arg} needs a whole number, not ${JSON.stringify(text)}`);
      return Number(text);
    };
    switch (arg) {
      case "-h":
      case "--help":
        process.stdout.write(`${USAGE}\n`);
        return 0;
      case "--port":
        opts.port = whole(value());
        break;
      case "--model":
        opts.model = value();
        break;
      case "--delay-ms":
        opts.delayMs = whole(value());
        break;
      case "--log":
        opts.logFile = value();
        break;
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  const stub = await startModelStub(opts);
  process.stdout.write(`${stub.url}\n`);
  process.stderr.write(`model-stub: listening on ${stub.url}; request log ${stub.logFile}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await stub.close();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`model-stub: ${(error as Error)?.message ?? String(error)}\n\n${USAGE}\n`);
    process.exit(2);
  },
);

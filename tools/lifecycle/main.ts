// `npm run lifecycle`: plays a Coder workspace's life with this module on this
// machine and prints a short report of what survived each restart.
// tools/lifecycle.sh sets up the toolchain, bundles this file and runs it.
import path from "node:path";
import { cleanupRun, LifecycleError, runLifecycle } from "./lifecycle.js";
import { formatReport } from "./report.js";

const USAGE = `Usage: npm run lifecycle -- [options]

Applies examples/workspace-template (a plain workspace) with the real Coder
provider, then runs the rendered start and stop coder_scripts as the Coder
agent does, in a throwaway HOME, against real AgentAPI and the Goose test
double (or a real goose): start, the first message typed into the chat, a
follow-up, stop, then start again and check that the same Goose session and
its chat history survive and that nothing is sent again. With --task it plays
a Coder task from examples/task-template instead: the task prompt on the
first start, and a local endpoint receiving the task log snapshot on every
stop. Deliveries and replies are counted in Goose's own database (sessions.db).

Options:
  --task            play a Coder task (examples/task-template) instead of a
                    plain workspace
  --restarts N      how many times to start again after the first start (default 1)
  --keep            keep the throwaway folder (.tmp/lifecycle-*) and any process
                    still running, for inspection
  --goose PATH      use this real goose instead of the test double (the same as
                    GOOSE_BIN=PATH in the environment; the flag wins). Without
                    --provider/--model it talks to a local model stub
                    (support/model-stub) as openai/gpt-4o: no network, no key.
                    With either, it uses that provider for real: export its
                    credentials (for example ANTHROPIC_API_KEY)
  --provider NAME   Goose provider (default: anthropic with the double, which
                    never calls it; openai with a real goose)
  --model NAME      Goose model (default: claude-sonnet-4-5 with the double;
                    gpt-4o with a real goose)
  --prompt TEXT     the task prompt (--task), or the first message typed into
                    the plain workspace's chat
  -h, --help        show this help

Exit status: 0 when every resume guarantee holds; 1 when a step fails (the
step is named) or a guarantee does not hold; 2 for a usage error.`;

interface Cli {
  task: boolean;
  restarts: number;
  keep: boolean;
  goose?: string;
  provider?: string;
  model?: string;
  prompt?: string;
}

function parseArgs(argv: string[]): Cli | "help" {
  const cli: Cli = { task: false, restarts: 1, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case "-h":
      case "--help":
        return "help";
      case "--keep":
        cli.keep = true;
        break;
      case "--task":
        cli.task = true;
        break;
      case "--restarts": {
        const text = value();
        if (!/^[0-9]+$/.test(text)) throw new Error(`--restarts needs a whole number, not ${JSON.stringify(text)}`);
        cli.restarts = Number(text);
        break;
      }
      case "--goose":
        cli.goose = path.resolve(value());
        break;
      case "--provider":
        cli.provider = value();
        break;
      case "--model":
        cli.model = value();
        break;
      case "--prompt":
        cli.prompt = value();
        break;
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  return cli;
}

async function main(): Promise<number> {
  let cli: Cli | "help";
  try {
    cli = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`lifecycle: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (cli === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = cli;

  // Ctrl-C or a kill: end what was started (unless --keep), then exit.
  let started: { runDir: string; home: string } | null = null;
  const onSignal = (name: NodeJS.Signals) => {
    process.stdout.write(`\nlifecycle: ${name} received; ${options.keep || !started ? "stopping" : "cleaning up"}\n`);
    const done = options.keep || !started ? Promise.resolve([]) : cleanupRun(started.runDir, started.home);
    void done.finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    const report = await runLifecycle({
      task: cli.task,
      restarts: cli.restarts,
      keep: cli.keep,
      goose: cli.goose,
      provider: cli.provider,
      model: cli.model,
      prompt: cli.prompt,
      logger: (line) => process.stdout.write(`lifecycle: ${line}\n`),
      onRunDir: (run) => {
        started = run;
      },
    });
    process.stdout.write(`${formatReport(report)}\n`);
    return report.ok ? 0 : 1;
  } catch (error) {
    const message =
      error instanceof LifecycleError
        ? error.message
        : `unexpected failure: ${(error as Error)?.stack ?? String(error)}`;
    process.stderr.write(`\nlifecycle: FAIL: ${message}\n`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`lifecycle: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);

// `npm run lifecycle`: plays a Coder workspace's life with this module on this
// machine and prints a short report of what survived each restart.
// tools/lifecycle.sh sets up the toolchain, bundles this file and runs it.
import path from "node:path";
import { cleanupRun, findRepoRoot, LifecycleError, runLifecycle, type LifecycleReport } from "./lifecycle.js";

const USAGE = `Usage: npm run lifecycle -- [options]

Applies examples/task-template with the real Coder provider, then runs the
rendered start and stop coder_scripts as the Coder agent does, in a throwaway
HOME, against real AgentAPI and the Goose test double (or a real goose): start
with a task prompt, a follow-up message, stop (with a local endpoint receiving
the task log snapshot), then start again and check that the same Goose session,
its chat history and a single delivery of the prompt survive. Deliveries and
replies are counted in Goose's own database (sessions.db).

Options:
  --restarts N      how many times to start again after the first start (default 1)
  --keep            keep the throwaway folder (.tmp/lifecycle-*) and any process
                    still running, for inspection
  --goose PATH      use this real goose instead of the test double (the same as
                    GOOSE_BIN=PATH in the environment; the flag wins). Without
                    --provider/--model it talks to a local model stub
                    (test/model-stub) as openai/gpt-4o: no network, no key.
                    With either, it uses that provider for real: export its
                    credentials (for example ANTHROPIC_API_KEY)
  --provider NAME   Goose provider (default: anthropic with the double, which
                    never calls it; openai with a real goose)
  --model NAME      Goose model (default: claude-sonnet-4-5 with the double;
                    gpt-4o with a real goose)
  --prompt TEXT     the task prompt
  -h, --help        show this help

Exit status: 0 when every resume guarantee holds; 1 when a step fails (the
step is named) or a guarantee does not hold; 2 for a usage error.`;

interface Cli {
  restarts: number;
  keep: boolean;
  goose?: string;
  provider?: string;
  model?: string;
  prompt?: string;
}

function parseArgs(argv: string[]): Cli | "help" {
  const cli: Cli = { restarts: 1, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
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

const ms = (n: number | undefined) => (n === undefined ? "-" : `${n} ms`);

export function formatReport(report: LifecycleReport, root: string): string {
  const out: string[] = [];
  const rel = (p: string) => path.relative(root, p) || ".";
  const [first] = report.cycles;
  const ids = report.cycles.map((c) => c.sessionId);
  const sameId = ids[0] !== null && ids.every((id) => id === ids[0]);
  out.push("");
  out.push("==== Goose module lifecycle report ====");
  out.push(`template        examples/task-template (terraform apply, real coder provider)`);
  out.push(`agent           ${report.goose.kind === "double" ? "Goose test double" : "goose"} ${report.goose.version} in AgentAPI ${report.agentapi.version}`);
  out.push(
    `model           ${report.provider}/${report.model}` +
      (report.modelStub ? ` via the local model stub (${report.modelStub.requests} request(s))` : report.goose.kind === "double" ? " (the double never calls it)" : " (real provider)"),
  );
  out.push(`workspace home  ${rel(report.home)}${report.kept ? " (kept)" : " (removed)"}`);
  out.push(`session         ${report.sessionName}, Goose id ${first?.sessionId ?? "none"}; same on every restart: ${sameId ? "yes" : "no"}`);
  out.push(`history         ${first ? `${first.messagesBeforeStop} message(s) before the first stop` : "-"}`);
  for (const c of report.cycles.slice(1)) {
    const before = report.cycles[c.index - 1]?.messagesBeforeStop ?? 0;
    out.push(`  restart #${c.index}     ${c.mode} start, session ${c.sessionId ?? "none"}: ${before} before stop -> ${c.messagesAfterStart} after restart -> ${c.messagesBeforeStop} after one more message`);
  }
  out.push(`prompt          delivered ${report.promptDeliveries} time(s) in total (user messages in Goose's database)`);
  for (const c of report.cycles) {
    out.push(`snapshot #${c.index}     ${c.snapshot ? `posted on stop: ${c.snapshot.messages} message(s), ${c.snapshot.bytes} bytes, answered ${c.snapshot.answered}` : "not posted"}`);
  }
  out.push(`phases          render ${ms(report.renderMs)}`);
  for (const c of report.cycles) {
    const label = c.index === 0 ? "start #0   " : `restart #${c.index} `;
    const startMs = c.index === 0 ? c.phases.start : c.phases.restart;
    out.push(`  ${label}    ${c.index === 0 ? "start" : "restart"} ${ms(startMs)} (script ${ms(c.startScriptMs)}), converse ${ms(c.phases.converse)}, stop ${ms(c.phases.stop)}`);
  }
  out.push(`total           ${ms(report.totalMs)}`);
  out.push("");
  for (const check of report.checks) out.push(`${check.skipped ? "SKIP" : check.ok ? "PASS" : "FAIL"} ${check.name} (${check.detail})`);
  const failed = report.checks.filter((c) => !c.ok);
  out.push(failed.length === 0 ? "RESULT: PASS" : `RESULT: FAIL (${failed.map((c) => c.name).join("; ")})`);
  if (report.kept) {
    out.push("");
    out.push(`Kept ${rel(report.runDir)}: the rendered scripts, run-start.sh / run-stop.sh to run them again, and`);
    out.push(`the module's logs in ${rel(path.join(report.home, ".coder-modules/coder/goose/logs"))}.`);
  }
  return out.join("\n");
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
  const root = findRepoRoot();
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
      restarts: cli.restarts,
      keep: cli.keep,
      goose: cli.goose,
      provider: cli.provider,
      model: cli.model,
      prompt: cli.prompt,
      repoRoot: root,
      logger: (line) => process.stdout.write(`lifecycle: ${line}\n`),
      onRunDir: (run) => {
        started = run;
      },
    });
    process.stdout.write(`${formatReport(report, root)}\n`);
    return report.ok ? 0 : 1;
  } catch (error) {
    const message = error instanceof LifecycleError ? error.message : `unexpected failure: ${(error as Error)?.stack ?? String(error)}`;
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

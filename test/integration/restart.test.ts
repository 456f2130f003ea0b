// What a real Goose does at a stop and a restart, against real
// AgentAPI and the Goose under test (the double, which behaves like the real
// binary: SIGINT ignored at the prompt, `/exit` exits 0, the reply stored only
// when a turn ends; or a real Goose with GOOSE_BIN).

import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DOUBLE_ONLY } from "../../support/vitest/skips.js";
import {
  agentSignals,
  agentStartArgs,
  childPids,
  gooseMessages,
  gooseUnderTest,
  type Rendered,
  type RunResult,
  run,
  tools,
  type Workspace,
} from "../../support/workspace/index.js";
import {
  agentapiPids,
  expectOk,
  launchRecord,
  newWorkspace,
  output,
  PROMPT,
  render,
  SESSION,
  savedState,
  sendWithoutWaiting,
  setTurnMs,
  start,
  stop,
  waitTurns,
} from "./scenario.js";

/**
 * A PATH folder whose `agentapi` runs the real binary and records its exit
 * code, which nothing else can see: the start detaches AgentAPI.
 */
async function agentapiRecordingExit(ws: Workspace, real: string): Promise<string> {
  const dir = path.join(ws.home, "agentapi-recording-exit");
  await mkdir(dir);
  const wrapper = path.join(dir, "agentapi");
  const record = `code=$?\nif [ "$1" = server ]; then echo "$code" >> "$HOME/agentapi-exit-codes"; fi\nexit "$code"\n`;
  await writeFile(wrapper, `#!/bin/sh\n'${real}' "$@"\n${record}`);
  await chmod(wrapper, 0o755);
  return wrapper;
}

async function exitCodes(ws: Workspace): Promise<string[]> {
  return (await readFile(path.join(ws.home, "agentapi-exit-codes"), "utf8").catch(() => ""))
    .split("\n")
    .filter(Boolean);
}

/** An agent message made of nothing but Goose's spinner or blank lines. */
function spinnerOnly(text: string): boolean {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  return lines.every((line) => /^\s*[◐◓◑◒]\s/.test(line));
}

/** Visible user messages that are not the task prompt: follow-ups and continuations. */
const notThePrompt = (text: string) => text !== PROMPT;

/**
 * Stores, as Goose would, an assistant reply the chat does not show after the
 * conversation's last message: metadata userVisible false, agentVisible true.
 * Goose is not running, so nothing else writes the database meanwhile.
 */
async function storeHiddenReply(ws: Workspace): Promise<void> {
  const sql = [
    "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json)",
    'SELECT \'hidden-reply\', session_id, \'assistant\', \'[{"type":"text","text":"Done."}]\', created_timestamp,',
    '\'{"userVisible":false,"agentVisible":true}\' FROM messages ORDER BY id DESC LIMIT 1;',
  ].join(" ");
  const stored = await run("sqlite3", ["-cmd", ".timeout 10000", ws.gooseDb, sql]);
  expect(stored.code, stored.stderr).toBe(0);
}

async function waitRunning(ws: Workspace): Promise<void> {
  await ws.waitFor("a running turn", async () => (await ws.status()) === "running");
}

/** A workspace whose Goose answered its task prompt and now runs a turn that does not end by itself. */
async function turnRunning(): Promise<{ ws: Workspace; rendered: Rendered }> {
  const ws = await newWorkspace();
  const rendered = await render(ws, { stop_turn_wait_seconds: 1, supervise: false });
  await setTurnMs(ws, 200);
  await start(ws, rendered);
  await waitTurns(ws, 1);
  await setTurnMs(ws, 600_000);
  await sendWithoutWaiting(ws, "Run the whole test suite.");
  await waitRunning(ws);
  return { ws, rendered };
}

/**
 * Start, and stop while Goose answers the task prompt and the start still
 * waits for that answer: the stop wins, and the start fails saying so.
 */
async function stopDuringPromptTurn(ws: Workspace, rendered: Rendered): Promise<RunResult> {
  await setTurnMs(ws, 600_000);
  const starting = ws.runStart(rendered);
  await ws.waitFor("the prompt stored by Goose", async () => (await ws.deliveries(PROMPT)) === 1);
  const stopped = await stop(ws, rendered);
  const started = await starting;
  expect(started.code).toBe(1);
  expect(started.stderr + started.stdout).toContain("the stop wins");
  return stopped;
}

/** Start, let the prompt be answered, then stop while Goose works on a follow-up. */
async function stopDuringFollowUp(ws: Workspace, rendered: Rendered, followUp: string): Promise<void> {
  await setTurnMs(ws, 200);
  await start(ws, rendered);
  await waitTurns(ws, 1);
  await setTurnMs(ws, 600_000);
  await sendWithoutWaiting(ws, followUp);
  await ws.waitFor("the follow-up stored by Goose", async () => (await ws.deliveries(followUp)) === 1);
  await waitRunning(ws);
  await stop(ws, rendered);
}

describe("an idle stop is graceful", () => {
  it(`AgentAPI ${"$"}AGENTAPI_BIN_NEW: Goose exits by itself on /exit, nothing is killed, AgentAPI exits 0 with the chat saved`, async () => {
    const ws = await newWorkspace();
    const agentapi = await agentapiRecordingExit(ws, tools.agentapiNew);
    const rendered = await render(ws);
    await start(ws, rendered, agentapi);
    await waitTurns(ws, 1);
    await ws.send("one more message before the stop");
    const shown = (await ws.messages()).length;

    const stopped = await stop(ws, rendered, agentapi);
    expect(stopped.stdout).toContain("Goose exited on /exit");
    expect(agentSignals(output(stopped))).toEqual([]);
    await ws.waitFor("AgentAPI's exit code", async () => (await exitCodes(ws)).length > 0);
    expect(await exitCodes(ws)).toEqual(["0"]);
    const saved = (await savedState(ws))!.messages;
    expect(saved).toHaveLength(shown);
    // Typing /exit must not leave its echo or Goose's goodbye in the chat.
    expect(saved.map((m) => m.message).join("\n")).not.toMatch(/\/exit|session closed/);
    if (!ws.goose.real) expect((await ws.events()).filter((e) => e.event === "exit").at(-1)).toMatchObject({ code: 0 });
  });

  it(`AgentAPI ${"$"}AGENTAPI_BIN_OLD (no persistence): Goose still exits by itself, nothing is killed`, async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    await start(ws, rendered, tools.agentapiOld);
    await waitTurns(ws, 1);
    const stopped = await stop(ws, rendered, tools.agentapiOld);
    expect(stopped.stdout).toContain("Goose exited on /exit");
    expect(agentSignals(output(stopped))).toEqual([]);
    if (!ws.goose.real) expect((await ws.events()).filter((e) => e.event === "exit").at(-1)).toMatchObject({ code: 0 });
  });
});

describe("a stop during a turn, and the restart after it", () => {
  it("the prompt's turn: cancelled so Goose leaves by itself, no spinner saved; the restart answers it with one delivery; the next restart sends nothing", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { stop_turn_wait_seconds: 1 });
    // Goose draws no spinner while it answers the prompt it was started with, so
    // AgentAPI reports "stable" then (observed with Goose 1.46.1); the stop
    // cancels the turn with a ^C before Goose can leave on /exit.
    const stopped = await stopDuringPromptTurn(ws, rendered);
    expect(stopped.stdout).toContain("Goose exited on /exit");
    expect(agentSignals(output(stopped))).toEqual([]);
    const saved = await savedState(ws);
    const agentMessages = saved!.messages.filter((m) => m.role === "agent");
    expect(agentMessages.filter((m) => spinnerOnly(m.message))).toEqual([]);
    expect(await ws.replies()).toBe(0);

    await setTurnMs(ws, 200);
    const resumed = await start(ws, rendered);
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("continue");
    expect(resumed.stdout).toMatch(/interrupted turn: .*carry on/);
    await waitTurns(ws, 1);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect(await ws.deliveries(notThePrompt)).toBe(1);
    if (!ws.goose.real) {
      // Goose merges the unanswered prompt with the continuation before it calls the model.
      const requests = (await ws.events()).filter((e) => e.event === "model_request");
      expect(requests.at(-1)?.text).toContain(PROMPT);
    } else {
      const requests = await ws.modelStub!.requests();
      expect(
        requests
          .at(-1)
          ?.messages.filter((m) => m.role === "user")
          .map((m) => m.text)
          .join("\n"),
      ).toContain(PROMPT);
    }
    await stop(ws, rendered);

    const again = await start(ws, rendered);
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("none");
    expect(again.stdout).not.toMatch(/carry on/);
    await ws.waitStable();
    expect(await ws.deliveries(notThePrompt)).toBe(1);
    expect(await ws.replies()).toBe(1);
    await stop(ws, rendered);
  });

  it("a follow-up's turn: the follow-up is answered after the restart", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { stop_turn_wait_seconds: 1 });
    await stopDuringFollowUp(ws, rendered, "Now also update the changelog.");
    expect(await ws.replies()).toBe(1);
    // Goose drew its spinner during this turn; no message made of it alone is kept.
    const saved = (await savedState(ws))!.messages;
    expect(saved.filter((m) => m.role === "agent" && spinnerOnly(m.message))).toEqual([]);

    await setTurnMs(ws, 200);
    await start(ws, rendered);
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("continue");
    const restored = await ws.waitFor("the saved chat restored", async () => {
      const now = await ws.messages().catch(() => []);
      return now.length >= saved.length ? now : null;
    });
    // Only what came back from the state file: the carried-on turn's own live
    // message may still be empty (a real Goose draws no spinner in that turn).
    const fromState = restored.slice(0, saved.length);
    expect(fromState.filter((m) => m.role === "agent" && spinnerOnly(m.content))).toEqual([]);
    await waitTurns(ws, 2);
    expect(await ws.deliveries("Now also update the changelog.")).toBe(1);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    await stop(ws, rendered);
  });

  it("a turn Goose answered with a reply the chat does not show: the restart sends nothing", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { stop_turn_wait_seconds: 1 });
    await stopDuringFollowUp(ws, rendered, "A follow-up answered out of sight.");
    // Goose keeps messages meant for the model alone with userVisible false
    // (MessageMetadata::agent_only in crates/goose/src/conversation/message.rs,
    // aaif-goose/goose); one stored as the reply ends the turn.
    await storeHiddenReply(ws);
    const replies = await ws.replies();

    await setTurnMs(ws, 200);
    const resumed = await start(ws, rendered);
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("none");
    expect(resumed.stdout).not.toMatch(/carry on/);
    await ws.waitStable();
    expect(await ws.deliveries(notThePrompt)).toBe(1);
    expect(await ws.replies()).toBe(replies);
    await stop(ws, rendered);
  });

  it("a `!` command, which Goose runs with no model turn and ends with its result: the restart sends nothing", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws);
    await start(ws, rendered);
    await waitTurns(ws, 1);
    await ws.send("!echo hello from a bang");
    // Goose's shell ran it: its result, a visible user row without text, is the conversation's last row.
    expect(await ws.deliveries("!echo hello from a bang")).toBe(1);
    expect((await gooseMessages(ws.gooseDb)).at(-1)).toMatchObject({ role: "user", text: "", userVisible: true });
    const replies = await ws.replies();
    await stop(ws, rendered);

    const resumed = await start(ws, rendered);
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("none");
    expect(resumed.stdout).not.toMatch(/carry on/);
    await ws.waitStable();
    expect(await ws.replies()).toBe(replies);
    await stop(ws, rendered);
  });

  it("a later turn with its spinner drawn, Goose hung in it: no spinner-only message is saved, nor restored", async () => {
    const { ws, rendered } = await turnRunning();
    const shown = await ws.waitFor("the spinner in the chat", async () => {
      const last = (await ws.messages()).at(-1);
      return last?.role === "agent" && spinnerOnly(last.content) && last.content.trim() !== "" ? last : null;
    });
    expect(shown.content).toMatch(/[◐◓◑◒]/);
    // Goose hangs mid-turn (a stuck tool, say): the spinner stays on the screen, and
    // the stop's Ctrl+C changes nothing; AgentAPI saves that screen as it exits.
    const [agentapi] = await agentapiPids(ws);
    const [goose] = await childPids(agentapi as number);
    process.kill(goose as number, "SIGSTOP");

    await stop(ws, rendered);
    const saved = (await savedState(ws))!.messages;
    expect(saved.filter((m) => m.role === "user").map((m) => m.message)).toContain("Run the whole test suite.");
    expect(saved.filter((m) => m.role === "agent" && spinnerOnly(m.message))).toEqual([]);

    await setTurnMs(ws, 200);
    await start(ws, rendered);
    const restored = await ws.waitFor("the saved chat restored", async () => {
      const now = await ws.messages().catch(() => []);
      return now.length >= saved.length ? now : null;
    });
    expect(restored.slice(0, saved.length).filter((m) => m.role === "agent" && spinnerOnly(m.content))).toEqual([]);
    await stop(ws, rendered);
  });

  it("a turn the stop cancels: its spinner line and the echoed ^C reach neither the saved chat nor the restored one", async () => {
    const { ws, rendered } = await turnRunning();
    await ws.waitFor("the spinner in the chat", async () =>
      /^[◐◓◑◒] {2}/mu.test((await ws.messages()).at(-1)?.content ?? ""),
    );
    // The stop's Ctrl+C cancels the turn; upstream Goose leaves the spinner's last
    // frame on the screen, and the terminal's ^C before its answer to the cancel.
    expect((await stop(ws, rendered)).stdout).toContain("was cancelled");
    const goosesWords = (texts: string[]) => {
      const text = texts.join("\n");
      expect(text).toContain("Yes — what would you like me to do?");
      expect(text).not.toMatch(/^[◐◓◑◒] {2}/mu);
      expect(text).not.toContain("^C");
    };
    const saved = (await savedState(ws))!.messages;
    goosesWords(saved.filter((m) => m.role === "agent").map((m) => m.message));

    await setTurnMs(ws, 200);
    await start(ws, rendered);
    const restored = await ws.waitFor("the saved chat restored", async () => {
      const now = await ws.messages().catch(() => []);
      return now.length >= saved.length ? now : null;
    });
    goosesWords(
      restored
        .slice(0, saved.length)
        .filter((m) => m.role === "agent")
        .map((m) => m.content),
    );
    await stop(ws, rendered);
  });

  it("continue_interrupted_turn = false: nothing is sent, and the log says the task waits for input", async () => {
    const ws = await newWorkspace();
    const rendered = await render(ws, { stop_turn_wait_seconds: 1, continue_interrupted_turn: false });
    await stopDuringPromptTurn(ws, rendered);

    await setTurnMs(ws, 200);
    const resumed = await start(ws, rendered);
    expect(resumed.stdout).toMatch(/waits for input/);
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("wait");
    await ws.waitStable();
    expect(await ws.deliveries(notThePrompt)).toBe(0);
    expect(await ws.replies()).toBe(0);
    await stop(ws, rendered);
  });
});

describe("the sqlite3 fallback agrees with Goose", () => {
  it("counts visible messages only (not the hidden turn-context rows) and finds the interrupted turn", async ({
    skip,
  }) => {
    skip(gooseUnderTest().real, DOUBLE_ONLY);
    const ws = await newWorkspace();
    const rendered = await render(ws, { stop_turn_wait_seconds: 1 });
    await stopDuringFollowUp(ws, rendered, "A follow-up that the stop interrupts.");

    const [session] = JSON.parse(await ws.gooseSessionList()) as Array<{
      id: string;
      name: string;
      message_count: number;
    }>;
    // The prompt, its reply and the follow-up; each user turn also wrote a hidden row.
    expect(session).toMatchObject({ name: SESSION, message_count: 3 });

    // `goose session list` and `export` fail (a locked database, say); everything else is the double.
    const broken = path.join(ws.home, "broken-list-bin");
    await mkdir(broken);
    const script = `#!/bin/sh\nif [ "$1" = session ] && { [ "$2" = list ] || [ "$2" = export ]; }; then echo "Error: database is locked" >&2; exit 1; fi\nexec '${ws.goose.bin}' "$@"\n`;
    await writeFile(path.join(broken, "goose"), script, { mode: 0o755 });
    await setTurnMs(ws, 200);
    const started = await run("/bin/sh", agentStartArgs(rendered), {
      cwd: ws.home,
      env: {
        ...ws.env(),
        PATH: [broken, path.dirname(tools.agentapiNew), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
      },
    });
    expectOk(started, "start with a failing session list and export");
    expect(started.stdout).toContain(
      `warm start: Goose has session "${SESSION}" (${session!.id}) with ${session!.message_count} message(s) [sqlite3 read`,
    );
    expect((await launchRecord(ws)).interrupted_turn.action).toBe("continue");
    await waitTurns(ws, 2);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect(await ws.deliveries("A follow-up that the stop interrupts.")).toBe(1);
    await stop(ws, rendered);
  });
});

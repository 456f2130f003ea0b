// What a person sees: the chat page the dashboard embeds, opened in Debian's
// Chromium through a stand-in for Coder's app proxy (support/workspace/
// app-proxy.ts), with the Host a browser sends through it; before and after a
// restart. And the CLI app, run in tmux the way its coder_app runs it.
//
// Assertions read the page's text. What Goose answered is taken from AgentAPI's
// own /messages and Goose's database, never from the module.
//
// The steps of each describe share one workspace, in order.

import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipAllFor } from "../../support/vitest/skips.js";
import { AppProxy, type ProxiedApp } from "../../support/workspace/app-proxy.js";
import {
  browserTools,
  ChatBrowser,
  type PageMessage,
  typeAndSend,
  waitForPage,
  waitInputReady,
} from "../../support/workspace/browser.js";
import {
  CODER_TASK,
  CoderEndpoint,
  coderAgentEnv,
  gooseMessages,
  type Rendered,
  repoRoot,
  resourceValues,
  run,
  Workspace,
} from "../../support/workspace/index.js";
import {
  ACCESS_URL,
  AGENT_ID,
  AGENT_NAME,
  DEPLOYMENT_ENV,
  expectAnswered,
  OWNER,
  occurrences,
  pageMatchesApi,
  userTexts,
  WILDCARD_HOST,
  WORKSPACE,
  webApp,
} from "./browser-scenario.js";
import { flat, PLAIN, PROMPT, render, SESSION, start, stop, waitTurns } from "./scenario.js";

/** Another name that reaches the deployment (an internal name, an IP): coderd serves path-based apps under any Host. */
const FOREIGN_HOST = "coder-internal.example.test";
const FOLLOW_UP = "Also update the changelog.";
const AFTER_RESTART = "Which tests did you change before the restart?";
const FIRST_PLAIN = "List the files in this folder.";

/** `npm run screenshots` points this at docs/images. */
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR || path.join(repoRoot, ".tmp", "screenshots");

const browser = browserTools();
const skip = "skip" in browser ? browser.skip : null;
if (skip) console.warn(`browser test skipped: ${skip}`);

describe("a task's chat in a browser, through Coder's path-based app proxy", () => {
  skipAllFor(skip);
  let ws: Workspace;
  let rendered: Rendered;
  let coder: CoderEndpoint;
  let proxy: AppProxy;
  let chrome: ChatBrowser;
  let page: Page;
  let app: ProxiedApp;
  let sessionId: string;
  let beforeRestart: PageMessage[];
  let promptAnswer: string;
  let followUpAnswer: string;
  let started: number;

  beforeAll(async () => {
    if (!("chromium" in browser)) return;
    started = Date.now();
    ws = await Workspace.create({ agentapi: browser.agentapi });
    coder = await CoderEndpoint.start(204);
    ws.setEnv({ CODER_AGENT_URL: coder.url, CODER_AGENT_TOKEN: coder.token });
    rendered = await render(
      ws,
      // As examples/task-template does: task = data.coder_task.me.
      { agent_id: AGENT_ID, cli_app: true, task: CODER_TASK },
      { ...DEPLOYMENT_ENV, CODER_TASK_ID: randomUUID(), CODER_TASK_PROMPT: PROMPT },
    );
    proxy = await AppProxy.start({ accessUrl: ACCESS_URL });
    app = webApp(rendered);
    proxy.apps.push(app);
    chrome = await ChatBrowser.launch(browser.chromium, proxy);
    page = await chrome.newPage();
  });

  afterAll(async () => {
    await chrome?.close();
    await proxy?.close();
    await ws?.cleanup();
    await coder?.close();
    if (started)
      console.log(`browser scenario (task, path-based app): ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it("cold start: the app opened from the dashboard's link shows the task prompt's answer", async () => {
    await start(ws, rendered);
    await waitTurns(ws, 1);
    sessionId = (await ws.sessionsNamed(SESSION))[0] as string;
    const answer = await page.goto(proxy.pathAppUrl(app));
    expect(answer?.status()).toBe(200);
    // AgentAPI sent the browser on to its chat under the module's base path, which names
    // the agent by ID; Coder resolves both spellings (request.go).
    expect(new URL(page.url()).pathname).toBe(`/@${OWNER}/${WORKSPACE}.${AGENT_ID}/apps/goose/chat/embed/`);
    expect(new URL(page.url()).host).toBe(new URL(ACCESS_URL).host);
    const shown = await pageMatchesApi(page, ws, "the prompt's answer on the page");
    // The prompt reaches Goose as its --instructions, so the chat holds Goose's answer, not a typed bubble.
    expect(userTexts(shown)).toEqual([]);
    promptAnswer = (await gooseMessages(ws.gooseDb, "assistant"))[0]?.text ?? "";
    expect(promptAnswer).not.toBe("");
    expect(occurrences(shown, promptAnswer)).toBe(1);
  });

  it("a message typed in the page's input is answered on the page", async () => {
    await typeAndSend(page, FOLLOW_UP);
    await waitTurns(ws, 2);
    const shown = await pageMatchesApi(page, ws, "the typed message and its answer on the page");
    expect(userTexts(shown)).toEqual([FOLLOW_UP]);
    expectAnswered(shown, FOLLOW_UP);
    followUpAnswer = (await gooseMessages(ws.gooseDb, "assistant"))[1]?.text ?? "";
    expect(occurrences(shown.slice(-1), followUpAnswer)).toBe(1);
    beforeRestart = shown;
  });

  it("after a stop and a start, the reloaded page shows the whole conversation, the prompt once, and answers", async () => {
    await stop(ws, rendered);
    await start(ws, rendered);
    await page.reload();
    const restored = await waitForPage(page, "the restored conversation", (m) => m.length >= beforeRestart.length);
    expect(restored).toEqual(beforeRestart);
    expect(occurrences(restored, promptAnswer)).toBe(1);

    await typeAndSend(page, AFTER_RESTART);
    await waitTurns(ws, 3);
    const shown = await pageMatchesApi(page, ws, "the message typed after the restart, answered");
    expect(shown.slice(0, beforeRestart.length)).toEqual(beforeRestart);
    expect(userTexts(shown)).toEqual([FOLLOW_UP, AFTER_RESTART]);
    expectAnswered(shown, AFTER_RESTART);
    expect(occurrences(shown, promptAnswer)).toBe(1);
    expect(await ws.deliveries(PROMPT)).toBe(1);
    expect(await ws.sessionsNamed(SESSION)).toEqual([sessionId]);

    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "chat-after-restart.png") });
  }, 300_000);

  it("the CLI app, run in tmux as its coder_app runs it, shows the same Goose session with the earlier conversation", async () => {
    const command = String(resourceValues(rendered, "module.goose.module.agentapi.coder_app.cli[0]").command);
    const socket = path.join(ws.home, "tmux.sock");
    // A HOME-tagged environment, so the workspace's cleanup ends the tmux server too.
    const env = { ...ws.env(), TERM: "xterm-256color" };
    const tmux = (...args: string[]) => run("tmux", ["-S", socket, ...args], { env, timeoutMs: 30_000 });
    const opened = await tmux("new-session", "-d", "-x", "120", "-y", "50", "/bin/sh", "-c", command);
    expect(opened.code, opened.stderr).toBe(0);
    let screen = "";
    try {
      await ws.waitFor("the CLI app's screen with the resumed session", async () => {
        screen = (await tmux("capture-pane", "-p", "-J")).stdout;
        return screen.includes(sessionId) && flat(screen).includes(AFTER_RESTART);
      });
      expect(screen).toMatch(/resuming/);
      // Goose reprints the earlier turns under its banner, before the turn typed after the
      // restart. AgentAPI's terminal wraps long lines anywhere, so spaces and breaks are ignored.
      const squeezed = screen.replace(/\s+/g, "");
      const at = (text: string) => squeezed.indexOf(text.replace(/\s+/g, ""));
      const order = ["messagesrestored", PROMPT, promptAnswer, FOLLOW_UP, followUpAnswer, AFTER_RESTART].map(at);
      expect(
        order.every((index) => index >= 0),
        `found at ${order.join(", ")}`,
      ).toBe(true);
      expect(order).toEqual([...order].sort((a, b) => a - b));
    } catch (err) {
      throw new Error(`${(err as Error).message}; the screen showed:\n${screen}`);
    } finally {
      await tmux("kill-server");
    }
  });

  it("a host that is not on the allow-list gets AgentAPI's refusal, not the chat", async () => {
    const other = await chrome.newPage();
    const answer = await other.goto(proxy.pathAppUrl(app, FOREIGN_HOST));
    expect(answer?.status()).toBe(400);
    expect(await other.locator("body").innerText()).toMatch(/^Invalid host header/);
    await other.close();
  });
});

describe("a plain workspace's chat in a browser, on a subdomain app", () => {
  skipAllFor(skip);
  let ws: Workspace;
  let proxy: AppProxy;
  let chrome: ChatBrowser;

  beforeAll(async () => {
    if (!("chromium" in browser)) return;
    ws = await Workspace.create({ agentapi: browser.agentapi });
    proxy = await AppProxy.start({ accessUrl: ACCESS_URL, wildcardHost: WILDCARD_HOST });
    chrome = await ChatBrowser.launch(browser.chromium, proxy);
  });

  afterAll(async () => {
    await chrome?.close();
    await proxy?.close();
    await ws?.cleanup();
  });

  it("shows Goose ready after a cold start, and answers the first message typed in the page", async () => {
    ws.setEnv(
      coderAgentEnv({
        url: ACCESS_URL,
        token: "agent-token",
        workspaceName: WORKSPACE,
        owner: OWNER,
        agentName: AGENT_NAME,
        appHost: WILDCARD_HOST,
      }),
    );
    const rendered = await render(ws, { agent_id: AGENT_ID, ...PLAIN, subdomain: true }, DEPLOYMENT_ENV);
    const app = webApp(rendered);
    proxy.apps.push(app);
    await start(ws, rendered);

    const page = await chrome.newPage();
    const url = proxy.subdomainAppUrl(app);
    const answer = await page.goto(url);
    expect(answer?.status()).toBe(200);
    expect(new URL(page.url()).host).toBe(new URL(url).host);
    await waitInputReady(page);
    const ready = await pageMatchesApi(page, ws, "Goose's banner on the page");
    expect(userTexts(ready)).toEqual([]);
    expect(ready.map((m) => m.text).join("\n")).toContain("goose is ready");

    await typeAndSend(page, FIRST_PLAIN);
    await waitTurns(ws, 1);
    const shown = await pageMatchesApi(page, ws, "the first message and its answer on the page");
    expect(userTexts(shown)).toEqual([FIRST_PLAIN]);
    expectAnswered(shown, FIRST_PLAIN);

    // Newer dashboards link the app without the agent's name; the same chat shows there.
    const short = await chrome.newPage();
    expect((await short.goto(proxy.subdomainAppUrl(app, false)))?.status()).toBe(200);
    await waitForPage(
      short,
      "the chat under the name without the agent",
      (m) => JSON.stringify(m) === JSON.stringify(shown),
    );
    await short.close();
  });
});

// A person's view of the chat: Debian's Chromium, driven by playwright-core
// (which downloads no browser of its own), reaching AgentAPI's chat page
// through the app proxy stand-in. What a test reads is the page's text.
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import type { AppProxy } from "./app-proxy.js";
import { pollUntil } from "./exec.js";

/** What the browser test needs from tools/setup.sh, or why it cannot run here (one line). */
export function browserTools(): { chromium: string; agentapi: string } | { skip: string } {
  const chromiumBin = process.env.CHROMIUM_BIN;
  const agentapi = process.env.AGENTAPI_BIN_UI;
  if (!chromiumBin)
    return { skip: process.env.CHROMIUM_SKIP || "CHROMIUM_BIN is not set: run through `npm test` (tools/setup.sh)" };
  if (!agentapi)
    return {
      skip: process.env.AGENTAPI_UI_SKIP || "AGENTAPI_BIN_UI is not set: run through `npm test` (tools/setup.sh)",
    };
  return { chromium: chromiumBin, agentapi };
}

// The flags this machine class needs for a headless Chromium that makes no
// calls of its own (playwright-core adds --headless and --no-sandbox).
const CHROMIUM_ARGS = [
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export class ChatBrowser {
  private constructor(
    private readonly browser: Browser,
    readonly context: BrowserContext,
  ) {}

  /** A fresh profile whose every request goes to `proxy`, as if each name resolved to it. */
  static async launch(executablePath: string, proxy: AppProxy): Promise<ChatBrowser> {
    const browser = await chromium.launch({
      executablePath,
      args: CHROMIUM_ARGS,
      proxy: { server: proxy.proxyServer },
      timeout: 120_000,
    });
    const context = await browser.newContext({ viewport: { width: 900, height: 640 }, colorScheme: "light" });
    context.setDefaultTimeout(60_000);
    context.setDefaultNavigationTimeout(120_000);
    return new ChatBrowser(browser, context);
  }

  newPage(): Promise<Page> {
    return this.context.newPage();
  }

  close(): Promise<void> {
    return this.browser.close();
  }
}

export interface PageMessage {
  role: "user" | "agent";
  /** The bubble's text, whitespace collapsed. */
  text: string;
}

const flat = (text: string) => text.split(/\s+/).filter(Boolean).join(" ");

/**
 * The chat's bubbles, in order. AgentAPI's chat (chat/src/components/
 * message-list.tsx at v0.12.2) draws each message as a "rounded-lg
 * inline-block" box inside a row that is "text-right" for the user's.
 */
export async function pageMessages(page: Page): Promise<PageMessage[]> {
  const raw = await page.evaluate(() =>
    Array.from(document.querySelectorAll("div.inline-block.rounded-lg")).map((bubble) => ({
      user: bubble.parentElement?.classList.contains("text-right") ?? false,
      text: (bubble as HTMLElement).innerText,
    })),
  );
  return raw.map(({ user, text }) => ({ role: user ? "user" : "agent", text: flat(text) }));
}

// The chat's input box; react-textarea-autosize adds a hidden twin to measure text.
const chatInput = (page: Page) => page.locator('textarea:not([disabled]):not([aria-hidden="true"])');

/** The page's input takes text: AgentAPI reports the agent stable (message-input.tsx enables it only then). */
export async function waitInputReady(page: Page, timeoutMs = 120_000): Promise<void> {
  await chatInput(page).waitFor({ state: "visible", timeout: timeoutMs });
}

/** Types `text` into the page's input and presses its Send button, as a person would. */
export async function typeAndSend(page: Page, text: string): Promise<void> {
  await waitInputReady(page);
  const input = chatInput(page);
  await input.fill(text);
  await page.getByTitle("Send Message").click();
}

/** Waits until the page's bubbles satisfy `check`; the error names `what` and shows the last bubbles seen. */
export async function waitForPage(
  page: Page,
  what: string,
  check: (messages: PageMessage[]) => boolean,
  timeoutMs = 60_000,
): Promise<PageMessage[]> {
  let last: PageMessage[] = [];
  const result = await pollUntil(
    async () => {
      last = await pageMessages(page).catch(() => []);
      return check(last) ? last : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  );
  if ("value" in result) return result.value;
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}; the page showed ${JSON.stringify(last, null, 1)}`,
  );
}

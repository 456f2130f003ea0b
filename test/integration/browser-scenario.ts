// What browser.test.ts shares: the deployment it plays, the web app as Coder's
// proxy links it, and the chat a page shows next to the one AgentAPI holds.

import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { ProxiedApp } from "../../support/workspace/app-proxy.js";
import { type PageMessage, waitForPage } from "../../support/workspace/browser.js";
import { type Rendered, resourceValues, type Workspace } from "../../support/workspace/index.js";
import { flat } from "./scenario.js";

export const ACCESS_URL = "http://coder.example.test";
export const WILDCARD_HOST = "*.apps.example.test";
export const OWNER = "alice";
export const WORKSPACE = "dev";
export const AGENT_NAME = "main";
/** What coder_agent.main.id would be; the module puts it in the chat's base path. */
export const AGENT_ID = "0d5b7c2e-9f4a-4b8e-a1c3-5e6f7a8b9c0d";
/** The coder_env values of a workspace of OWNER's named WORKSPACE on the deployment at ACCESS_URL. */
export const DEPLOYMENT_ENV = {
  CODER_AGENT_URL: ACCESS_URL,
  CODER_WORKSPACE_NAME: WORKSPACE,
  CODER_WORKSPACE_OWNER: OWNER,
};

/** The coder_app "web" as Coder stores it, with the names the dashboard links it by. */
export function webApp(rendered: Rendered): ProxiedApp {
  const app = resourceValues(rendered, "module.goose.module.agentapi.coder_app.web[0]");
  return {
    owner: String(resourceValues(rendered, "module.goose.module.agentapi.data.coder_workspace_owner.me").name),
    workspace: String(resourceValues(rendered, "module.goose.module.agentapi.data.coder_workspace.me").name),
    agentName: AGENT_NAME,
    slug: String(app.slug),
    url: String(app.url),
  };
}

/** AgentAPI's own chat, shaped like the page's bubbles. */
async function apiMessages(ws: Workspace): Promise<PageMessage[]> {
  return (await ws.messages()).map((m) => ({ role: m.role === "user" ? "user" : "agent", text: flat(m.content) }));
}

/** Waits until the page shows exactly the chat AgentAPI holds, and returns it. */
export async function pageMatchesApi(page: Page, ws: Workspace, what: string): Promise<PageMessage[]> {
  await ws.waitStable();
  const api = await apiMessages(ws);
  await waitForPage(page, what, (shown) => JSON.stringify(shown) === JSON.stringify(api));
  return api;
}

/** How many times `text` is in the page's bubbles; the screen's line breaks may fall inside words, so spaces are ignored. */
export function occurrences(messages: PageMessage[], text: string): number {
  const squash = (t: string) => t.replace(/\s+/g, "");
  const needle = squash(text);
  return squash(messages.map((m) => m.text).join("")).split(needle).length - 1;
}

export const userTexts = (messages: PageMessage[]) => messages.filter((m) => m.role === "user").map((m) => m.text);

/** The last two bubbles are `text` from the user and a non-empty answer after it. */
export function expectAnswered(messages: PageMessage[], text: string): void {
  const [asked, answer] = messages.slice(-2);
  expect(asked).toEqual({ role: "user", text });
  expect(answer?.role).toBe("agent");
  expect(answer?.text).not.toBe("");
}

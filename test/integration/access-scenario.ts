// What access.test.ts starts: the module rendered for a deployment at
// ACCESS_URL, and the URLs Coder sends its requests to.

import { resourceValues } from "../../support/workspace/index.js";
import { newWorkspace, PLAIN, render, start } from "./scenario.js";

export const ACCESS_URL = "https://coder.example.test";

/** The module rendered for a deployment at ACCESS_URL, with Goose waiting at its prompt. */
export async function startedWorkspace(agentapi: string, vars: Record<string, unknown> = {}, agentEnv = {}) {
  const ws = await newWorkspace();
  ws.setEnv(agentEnv);
  const rendered = await render(ws, { ...PLAIN, ...vars }, { CODER_AGENT_URL: ACCESS_URL });
  const started = await start(ws, rendered, agentapi);
  await ws.waitStable();
  const app = resourceValues(rendered, "module.goose.module.agentapi.coder_app.web[0]");
  const accessUrl = String(resourceValues(rendered, "module.goose.data.coder_workspace.me").access_url);
  const [healthcheck] = app.healthcheck as Array<{ url: string }>;
  return { ws, rendered, started, appUrl: String(app.url), healthcheckUrl: String(healthcheck?.url), accessUrl };
}

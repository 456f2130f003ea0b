// The workspace simulator that the integration tests, `npm run lifecycle` and
// the benchmark share: render the module with terraform, run its coder_scripts
// as the Coder agent does, talk to AgentAPI, stand in for the Coder
// deployment, and look at Goose's database and the workspace's processes.

export type { ChatMessage, RawResponse } from "./agentapi-client.js";
export { agentStartArgs, coderAgentEnv } from "./coder-agent.js";
export { CoderEndpoint, type EndpointAnswer, type RecordedRequest, type SnapshotPost } from "./coder-endpoint.js";
export { EgressProxy } from "./egress-proxy.js";
export { pollUntil, type RunResult, run, tail, waitFor } from "./exec.js";
export { type GooseUnderTest, gooseUnderTest, linkGoose } from "./goose.js";
export {
  type GooseMessage,
  gooseMessages,
  gooseSessionExtensionConfigs,
  gooseSessionExtensions,
  gooseSessionModes,
  type SavedExtension,
} from "./goose-db.js";
export { freePort } from "./ports.js";
export {
  DESKTOP_COMMANDER,
  type PredecessorTemplate,
  predecessorConfigYaml,
  predecessorHints,
  README_SYSTEM_PROMPT,
  writePredecessorHome,
} from "./predecessor-home.js";
export {
  childPids,
  commandLine,
  isRunning,
  killProcessesWithEnv,
  parentPid,
  processesWithEnv,
  processState,
  readCmdline,
  umaskOf,
} from "./processes.js";
export { type Certificate, gooseTarball, ReleaseMirror, sha256, throwawayCertificate } from "./release-mirror.js";
export {
  CODER_TASK,
  type PlanDiagnostic,
  type PlanOptions,
  planExample,
  type Rendered,
  renderExample,
  renderModule,
  resourceValues,
} from "./render.js";
export { coderCliStandinDir, GOOSE_DOUBLE, gooseDoubleDir, repoRoot, scratchDir, tools } from "./repo.js";
export { machineRuntime, pathOffering, type ScriptRuntime, scriptRuntime } from "./runtime.js";
export { agentSignals, SUPERVISOR_FALLBACK } from "./signals.js";
export { Workspace, type WorkspaceOptions, type WorkspaceUser } from "./workspace.js";

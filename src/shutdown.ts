import { homeDir, readJsonConfig, resolvePaths, type StopConfig } from "./config.js";
import { log, reportFatal } from "./log.js";

async function main(): Promise<void> {
  const config = await readJsonConfig<StopConfig>(process.argv[2]);
  const paths = resolvePaths(homeDir(), config.module_folder, config.agentapi);
  log(`stop: PID file ${paths.pidFile}`);
}

main().then(
  () => process.exit(0),
  (error) => reportFatal(error),
);

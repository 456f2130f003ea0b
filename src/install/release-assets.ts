import { StepError } from "../lib/log.js";

// Where each release asset lives, and the architecture names the module's
// *_sha256 maps use (AgentAPI's own: amd64, arm64).

export type ReleaseArch = "amd64" | "arm64";

/** The release architecture for Node's process.arch, or null when neither project publishes a Linux build for it. */
export function releaseArch(nodeArch: string): ReleaseArch | null {
  if (nodeArch === "x64") return "amd64";
  if (nodeArch === "arm64") return "arm64";
  return null;
}

export function requireReleaseArch(nodeArch: string, tool: string, variable: string): ReleaseArch {
  const arch = releaseArch(nodeArch);
  if (arch === null)
    throw new StepError(
      `${tool} publishes no Linux build for the ${nodeArch} architecture; install ${tool} in the workspace image and set ${variable} = false.`,
    );
  return arch;
}

function joined(base: string, ...parts: string[]): string {
  return [base.replace(/\/+$/, ""), ...parts].join("/");
}

/** coder/agentapi's release binary: <base>/<vX.Y.Z>/agentapi-linux-<arch> (.github/workflows/release.yml). */
export function agentapiAssetUrl(base: string, version: string, arch: ReleaseArch): string {
  return joined(base, version, `agentapi-linux-${arch}`);
}

/**
 * aaif-goose/goose's CLI tarball: <base>/v<X.Y.Z>/goose-<x86_64|aarch64>-unknown-linux-gnu.tar.bz2,
 * the name its download_cli.sh fetches (download_cli.sh at v1.47.0). The
 * .tar.gz twin exists only from release 1.29 on; the .tar.bz2 from 1.0 on.
 */
export function gooseAssetUrl(base: string, version: string, arch: ReleaseArch): string {
  const target = arch === "amd64" ? "x86_64" : "aarch64";
  return joined(base, `v${version.replace(/^v/, "")}`, `goose-${target}-unknown-linux-gnu.tar.bz2`);
}

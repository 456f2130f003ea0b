import { describe, expect, it } from "vitest";
import {
  agentapiAssetUrl,
  gooseAssetUrl,
  releaseArch,
  requireReleaseArch,
} from "../../../src/install/release-assets.js";

// Asset names as the projects' release workflows publish them:
// coder/agentapi .github/workflows/release.yml (agentapi-linux-amd64/arm64),
// aaif-goose/goose .github/workflows/build-cli-linux.yml at v1.47.0 and its
// download_cli.sh (goose-x86_64/aarch64-unknown-linux-gnu.tar.bz2).

describe("releaseArch", () => {
  it.each([
    ["x64", "amd64"],
    ["arm64", "arm64"],
    ["ia32", null],
    ["arm", null],
    ["s390x", null],
  ])("Node's %s is %s", (nodeArch, expected) => {
    expect(releaseArch(nodeArch)).toBe(expected);
  });

  it("names the variable to turn the install off when there is no build", () => {
    expect(() => requireReleaseArch("ia32", "AgentAPI", "install_agentapi")).toThrow(
      "AgentAPI publishes no Linux build for the ia32 architecture; install AgentAPI in the workspace image and set install_agentapi = false.",
    );
  });
});

describe("release asset URLs", () => {
  const [A, G] = [
    "https://github.com/coder/agentapi/releases/download",
    "https://github.com/aaif-goose/goose/releases/download",
  ];
  it.each([
    [agentapiAssetUrl(A, "v0.12.2", "amd64"), `${A}/v0.12.2/agentapi-linux-amd64`],
    [
      agentapiAssetUrl("http://127.0.0.1:9/mirror//", "v0.12.2", "arm64"),
      "http://127.0.0.1:9/mirror/v0.12.2/agentapi-linux-arm64",
    ],
    [gooseAssetUrl(G, "1.47.0", "amd64"), `${G}/v1.47.0/goose-x86_64-unknown-linux-gnu.tar.bz2`],
    [
      gooseAssetUrl("file:///srv/goose", "v1.47.0", "arm64"),
      "file:///srv/goose/v1.47.0/goose-aarch64-unknown-linux-gnu.tar.bz2",
    ],
  ])("%s", (actual, expected) => {
    expect(actual).toBe(expected);
  });
});

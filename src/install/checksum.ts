import { StepError } from "../lib/log.js";
import type { ReleaseArch } from "./release-assets.js";

// Whether a download is the file the template expects. The module pins no
// checksum for its default versions: neither project publishes a checksum
// file (coder/agentapi .github/workflows/release.yml uploads the binaries
// only; aaif-goose/goose release.yml at v1.47.0 adds build-provenance
// attestations), and the SHA-256 digest GitHub records for every release
// asset (https://github.blog/changelog/2025-06-03-releases-now-expose-digests-for-release-assets/)
// could not be read where this module was built. So the template's *_sha256
// map is the one source; with it empty the download is installed and
// reported as not verified, with its digest, to compare with the release page.

export interface Sha256Setting {
  /** The Terraform variable, for messages: "agentapi_sha256". */
  variable: string;
  /** Its value: architecture to lower- or upper-case hex. */
  pins: Record<string, string>;
}

/**
 * The SHA-256 the download for `arch` must have, or null when the variable is
 * empty. A map that names other architectures but not this one is refused
 * before anything is downloaded: the admin asked for verified downloads.
 */
export function expectedSha256(setting: Sha256Setting, arch: ReleaseArch): string | null {
  const pinned = setting.pins[arch];
  if (pinned !== undefined) return pinned.toLowerCase();
  const named = Object.keys(setting.pins);
  if (named.length === 0) return null;
  throw new StepError(
    `${setting.variable} names ${named.join(", ")} but not ${arch}, this workspace's architecture, so its download cannot be verified. Add ${setting.variable}["${arch}"], the SHA-256 of the ${arch} release asset.`,
  );
}

export interface DigestCheck {
  /** What was downloaded, for messages: "agentapi v0.12.2". */
  what: string;
  url: string;
  variable: string;
  arch: ReleaseArch;
  expected: string | null;
  actual: string;
}

/**
 * The start log's line for a download that may be used: verified, or not
 * verified and why. Throws, naming both digests, when it is not the expected file.
 */
export function checkSha256(check: DigestCheck): { verified: boolean; message: string } {
  const { what, url, variable, arch, expected, actual } = check;
  if (expected === null)
    return {
      verified: false,
      message: `${what} from ${url} is NOT verified: no SHA-256 is pinned for it and ${variable} is empty. It has SHA-256 ${actual}; compare it with the release's published digest and set ${variable} = { ${arch} = "${actual}" } to verify every later download.`,
    };
  if (actual === expected)
    return {
      verified: true,
      message: `${what} from ${url} verified: SHA-256 ${actual} matches ${variable}["${arch}"]`,
    };
  throw new StepError(
    `${what} from ${url} has SHA-256 ${actual}, but ${variable}["${arch}"] expects ${expected}. The file was deleted without being run or unpacked. The mirror, a proxy or the network served a different file: check the download URL; if the release itself was replaced, check the new file and update ${variable}.`,
  );
}

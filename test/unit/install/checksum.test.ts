import { describe, expect, it } from "vitest";
import { checkSha256, expectedSha256 } from "../../../src/install/checksum.js";

const A = "a".repeat(64);
const B = "b".repeat(64);

describe("expectedSha256", () => {
  it.each([
    [{}, "amd64", null],
    [{ amd64: A }, "amd64", A],
    [{ amd64: A.toUpperCase(), arm64: B }, "amd64", A],
    [{ amd64: A, arm64: B }, "arm64", B],
  ] as const)("%j for %s: %s", (pins, arch, expected) => {
    expect(expectedSha256({ variable: "goose_sha256", pins }, arch)).toBe(expected);
  });

  it("refuses a map that leaves out this workspace's architecture", () => {
    expect(() => expectedSha256({ variable: "goose_sha256", pins: { amd64: A } }, "arm64")).toThrow(
      'goose_sha256 names amd64 but not arm64, this workspace\'s architecture, so its download cannot be verified. Add goose_sha256["arm64"]',
    );
  });
});

describe("checkSha256", () => {
  const base = {
    what: "agentapi v0.12.2",
    url: "https://m/agentapi",
    variable: "agentapi_sha256",
    arch: "amd64",
  } as const;

  it("verifies a download whose digest is the pinned one", () => {
    expect(checkSha256({ ...base, expected: A, actual: A })).toEqual({
      verified: true,
      message: `agentapi v0.12.2 from https://m/agentapi verified: SHA-256 ${A} matches agentapi_sha256["amd64"]`,
    });
  });

  it("refuses another file, naming both digests", () => {
    expect(() => checkSha256({ ...base, expected: A, actual: B })).toThrow(
      `agentapi v0.12.2 from https://m/agentapi has SHA-256 ${B}, but agentapi_sha256["amd64"] expects ${A}. The file was deleted without being run or unpacked.`,
    );
  });

  it("lets an unpinned download through, saying it is not verified and how to pin it", () => {
    const verdict = checkSha256({ ...base, expected: null, actual: B });
    expect(verdict.verified).toBe(false);
    expect(verdict.message).toContain("agentapi v0.12.2 from https://m/agentapi is NOT verified");
    expect(verdict.message).toContain(`set agentapi_sha256 = { amd64 = "${B}" }`);
  });
});

/**
 * The Goose releases an upstream build of which ran the module's whole
 * lifecycle, the one home of this list: the README's version section and
 * test/goose-facts/ (one facts file per release, "built" or read from
 * "source") agree with it, and a unit test holds them together. The oldest
 * release the module accepts, 1.34.0, is checked at plan time (variables.tf).
 */
export const GOOSE_VERIFIED: readonly string[] = ["1.47.0"];

/** The start log's line on the Goose it runs: its version, and whether this module was verified with it. */
export function describeGooseVersion(version: string | null, verified = GOOSE_VERIFIED): string {
  return version !== null && verified.includes(version)
    ? `goose ${version}: verified with this module`
    : `goose ${version ?? "(no version: goose --version failed)"}: not verified with this module (verified: ${verified.join(", ")})`;
}

// Every conditional skip names its reason (ctx.skip(note)), so that the
// summary reporter lists it. A reason that starts with BY_DESIGN is a test
// this run cannot hold by its own choice (a real Goose, no root); any other
// skip is a setup that failed, and fails a CI run (tools/test.sh).
import { beforeEach } from "vitest";

export const BY_DESIGN = "by design: ";

/** A test that turns a knob of the Goose double, which a real Goose (GOOSE_BIN) does not have. */
export const DOUBLE_ONLY = `${BY_DESIGN}double-only: it turns a knob of the Goose double, and GOOSE_BIN runs a real Goose`;

/** A test that needs root, in a run that is not. */
export const needsRoot = (what: string) => `${BY_DESIGN}needs root: ${what}`;

/** Skips every test of the enclosing block with `reason`, unless it is null. */
export function skipAllFor(reason: string | null): void {
  beforeEach(({ skip }) => {
    if (reason !== null) skip(reason);
  });
}

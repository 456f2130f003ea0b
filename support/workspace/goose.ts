// Which Goose runs: the test double, or a real binary from GOOSE_BIN (or the
// lifecycle's --goose), which then talks to the local model stub as OpenAI.
import { createHash } from "node:crypto";
import {
  accessSync,
  constants as fsConstants,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import path from "node:path";
import { GOOSE_DOUBLE, gooseDoubleDir, scratchRoot } from "./repo.js";

/** The provider and model a real Goose is given: the model stub speaks OpenAI's API. */
const REAL_GOOSE_PROVIDER = "openai";
const REAL_GOOSE_MODEL = "gpt-4o";

export interface GooseUnderTest {
  /** True when a real Goose runs, false for the test double. */
  real: boolean;
  /** The goose executable: the resolved real binary, or the double. */
  bin: string;
  /**
   * The folder to put first on PATH; it holds an executable named `goose`: the
   * double's folder, or, for a real Goose, .tmp/goose-bin-<hash>, a folder of
   * its own holding only a `goose` symlink to the binary (nothing else next to
   * that binary lands on PATH, and the binary's file name does not matter).
   */
  pathDir: string;
  /** goose_provider / goose_model a real Goose needs; null with the double. */
  provider: string | null;
  model: string | null;
  /** The Terraform variables to pass: the caller's, with goose_provider and goose_model set for a real Goose. */
  vars<T extends object>(callerVars?: T): T;
}

const underTest = new Map<string, GooseUnderTest>();

/**
 * Checks that `bin` is an executable file, then returns a folder under
 * `parent` holding only a `goose` symlink to it, for the front of PATH: a new
 * private one, or with `reuseName`, `parent/reuseName`, made once and shared
 * by later calls (and processes) for the same binary.
 */
export function linkGoose(bin: string, parent: string, reuseName?: string): string {
  const target = path.resolve(bin);
  try {
    if (!statSync(target).isFile()) throw new Error("not a file");
    accessSync(target, fsConstants.X_OK);
  } catch (error) {
    throw new Error(
      `${target} is not an executable goose (${(error as Error).message}); without GOOSE_BIN (or --goose) the Goose test double runs.`,
    );
  }
  const linksTo = (dir: string) => {
    try {
      return readlinkSync(path.join(dir, "goose")) === target;
    } catch {
      return false;
    }
  };
  mkdirSync(parent, { recursive: true });
  const shared = reuseName ? path.join(parent, reuseName) : null;
  if (shared && linksTo(shared)) return shared;
  const fresh = mkdtempSync(path.join(parent, "goose-bin-"));
  symlinkSync(target, path.join(fresh, "goose"));
  if (!shared) return fresh;
  try {
    renameSync(fresh, shared);
  } catch {
    // Another process made it first (or something else is in the way).
    rmSync(fresh, { recursive: true, force: true });
  }
  if (!linksTo(shared)) throw new Error(`${shared} exists but holds no goose symlink to ${target}; remove it`);
  return shared;
}

/**
 * A real Goose when `bin` (default: env GOOSE_BIN) is set, else the test
 * double. Memoized per binary; the symlink folder is .tmp/goose-bin-<hash>,
 * shared by every run with that binary.
 */
export function gooseUnderTest(bin: string | undefined = process.env.GOOSE_BIN): GooseUnderTest {
  const key = bin ? path.resolve(bin) : "";
  const known = underTest.get(key);
  if (known) return known;
  const found: GooseUnderTest = key
    ? {
        real: true,
        bin: key,
        pathDir: linkGoose(
          key,
          scratchRoot,
          `goose-bin-${createHash("sha256").update(key).digest("hex").slice(0, 12)}`,
        ),
        provider: REAL_GOOSE_PROVIDER,
        model: REAL_GOOSE_MODEL,
        vars: <T extends object>(callerVars?: T) =>
          ({ ...(callerVars ?? {}), goose_provider: REAL_GOOSE_PROVIDER, goose_model: REAL_GOOSE_MODEL }) as T,
      }
    : {
        real: false,
        bin: GOOSE_DOUBLE,
        pathDir: gooseDoubleDir,
        provider: null,
        model: null,
        vars: <T extends object>(callerVars?: T) => ({ ...(callerVars ?? {}) }) as T,
      };
  underTest.set(key, found);
  return found;
}

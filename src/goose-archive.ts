import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { open, rm } from "node:fs/promises";
import { tail } from "./command-log.js";
import { run } from "./exec.js";
import { StepError } from "./log.js";
import { minimalEnv } from "./minimal-env.js";

// Takes the goose binary out of Goose's release tarball. tar only reads the
// archive: the one member is written to its standard output, into a file this
// process created, so no name, link or path in the archive can make it write
// anywhere else.

const TAR_TIMEOUT_MS = 300_000;

/**
 * The member that holds the binary, from `tar -t`'s listing. Upstream packs
 * `tar -cjf … -C goose-package .`, so it is "./goose"
 * (.github/workflows/build-cli-linux.yml at v1.47.0); a bare "goose" is
 * accepted too.
 */
export function gooseMember(listing: string, source: string): string {
  const found = listing.split("\n").filter((name) => name === "./goose" || name === "goose");
  if (found.length === 1) return found[0] as string;
  throw new StepError(
    `the archive from ${source} ${found.length === 0 ? "has no goose at its top level" : "holds goose more than once"}, unlike Goose's release tarballs. Check goose_download_url and goose_version.`,
  );
}

/** Runs tar with its standard output going to `out`; resolves to its exit code and the end of what it printed on stderr. */
function tarToFile(tar: string, args: string[], out: number, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(tar, args, { env, stdio: ["ignore", out, "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), TAR_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, stderr: error.message });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Writes the goose binary from `archive` (a .tar.bz2) to the new file `dest`, mode 0700. */
export async function extractGoose(opts: {
  tar: string;
  archive: string;
  dest: string;
  source: string;
  env: NodeJS.ProcessEnv;
}): Promise<void> {
  const env = minimalEnv(opts.env);
  const listed = await run(opts.tar, ["-tjf", opts.archive], { env, timeoutMs: TAR_TIMEOUT_MS });
  if (listed.code !== 0)
    throw new StepError(
      `cannot read the Goose archive from ${opts.source} (tar -t: ${tail(listed.error ?? listed.stderr, 5) || `exit ${listed.code}`}). Check goose_download_url; tar needs bzip2 to read it.`,
    );
  const member = gooseMember(listed.stdout, opts.source);
  const out = await open(
    opts.dest,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o700,
  );
  let result: { code: number | null; stderr: string };
  let size: number;
  try {
    result = await tarToFile(opts.tar, ["-xjOf", opts.archive, member], out.fd, env);
    size = (await out.stat()).size;
  } finally {
    await out.close();
  }
  if (result.code !== 0 || size === 0) {
    await rm(opts.dest, { force: true });
    throw new StepError(
      result.code !== 0
        ? `unpacking ${member} from the Goose archive from ${opts.source} failed (tar: ${tail(result.stderr, 5) || `exit ${result.code}`}).`
        : `${member} in the Goose archive from ${opts.source} is not a regular file with content. Check goose_download_url.`,
    );
  }
}

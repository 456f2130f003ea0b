import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { type FileHandle, open, rm } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { tail } from "../lib/command-log.js";
import { run } from "../lib/exec.js";
import { StepError } from "../lib/log.js";
import { minimalEnv } from "../lib/minimal-env.js";

// Takes the goose binary out of Goose's release tarball. tar only reads the
// archive: the one member is written to its standard output, into a file this
// process created, so no name, link or path in the archive can make it write
// anywhere else.

const TAR_TIMEOUT_MS = 300_000;
/**
 * The most the unpacked goose may take on the home volume, which also holds
 * Goose's sessions and the chat: several times Goose's binary (about 150 to
 * 250 MB).
 */
const GOOSE_MAX_BYTES = 1024 * 1024 * 1024;

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

interface TarOutcome {
  code: number | null;
  stderr: string;
  bytes: number;
  tooBig: boolean;
}

/** Runs tar with its standard output written to `out`, which it closes, stopping it once more than `maxBytes` arrive. */
async function tarToFile(
  tar: string,
  args: string[],
  out: FileHandle,
  env: NodeJS.ProcessEnv,
  maxBytes: number,
): Promise<TarOutcome> {
  const child = spawn(tar, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), TAR_TIMEOUT_MS);
  const exited = new Promise<number | null>((resolve) => {
    child.once("error", (error) => {
      stderr = error.message;
      resolve(null);
    });
    child.once("close", resolve);
  });
  let bytes = 0;
  let tooBig = false;
  try {
    await pipeline(
      child.stdout,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          bytes += chunk.length;
          if (bytes > maxBytes) {
            tooBig = true;
            child.kill("SIGKILL");
            throw new Error("too big");
          }
          yield chunk;
        }
      },
      out.createWriteStream(),
    );
  } catch (error) {
    if (!tooBig) {
      child.kill("SIGKILL");
      stderr ||= (error as Error).message;
    }
  }
  const code = await exited;
  clearTimeout(timer);
  return { code: tooBig ? null : code, stderr, bytes, tooBig };
}

/**
 * Writes the goose binary from `archive` (a .tar.bz2) to the new file `dest`,
 * mode 0700, at most `maxBytes` of it; on any failure no file is left.
 */
export async function extractGoose(opts: {
  tar: string;
  archive: string;
  dest: string;
  source: string;
  env: NodeJS.ProcessEnv;
  maxBytes?: number;
}): Promise<void> {
  const env = minimalEnv(opts.env);
  const maxBytes = opts.maxBytes ?? GOOSE_MAX_BYTES;
  const listed = await run(opts.tar, ["-tjf", opts.archive], { env, timeoutMs: TAR_TIMEOUT_MS });
  if (listed.code !== 0)
    throw new StepError(
      `cannot read the Goose archive from ${opts.source} (tar -t: ${tail(listed.error ?? listed.stderr, 5) || `exit ${listed.code}`}). Check goose_download_url; tar needs bzip2 to read it.`,
    );
  const member = gooseMember(listed.stdout, opts.source);
  // Created here, never through a link planted at its name.
  const out = await open(
    opts.dest,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o700,
  );
  let result: TarOutcome;
  try {
    result = await tarToFile(opts.tar, ["-xjOf", opts.archive, member], out, env, maxBytes);
  } catch (error) {
    await rm(opts.dest, { force: true });
    throw error;
  }
  if (result.tooBig || result.code !== 0 || result.bytes === 0) {
    await rm(opts.dest, { force: true });
    throw new StepError(
      result.tooBig
        ? `${member} in the Goose archive from ${opts.source} unpacks to more than ${maxBytes / 1024 / 1024} MiB, far more than any Goose release; it was deleted. Check goose_download_url.`
        : result.code !== 0
          ? `unpacking ${member} from the Goose archive from ${opts.source} failed (tar: ${tail(result.stderr, 5) || `exit ${result.code}`}).`
          : `${member} in the Goose archive from ${opts.source} is not a regular file with content. Check goose_download_url.`,
    );
  }
}

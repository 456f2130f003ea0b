// Unpacking goose from a release tarball with the real tar: the binary is
// written only where the module says, and no bigger than the cap, so a bad
// archive cannot fill the home volume that holds Goose's sessions and the chat.

import { execFileSync } from "node:child_process";
import { lstat, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { extractGoose } from "../../../src/install/goose-archive.js";
import { scratchFolders } from "../scratch.js";

const fresh = scratchFolders("goose-archive-test");

/** A tarball packed as upstream packs Goose's, holding `content` as ./goose. */
async function tarball(dir: string, content: Buffer): Promise<string> {
  const packageDir = path.join(dir, "goose-package");
  await mkdir(packageDir);
  await writeFile(path.join(packageDir, "goose"), content, { mode: 0o755 });
  const archive = path.join(dir, "goose.tar.bz2");
  execFileSync("tar", ["-cjf", archive, "-C", packageDir, "."]);
  return archive;
}

const env = { PATH: "/usr/bin:/bin" };

describe("extractGoose", () => {
  it("writes the binary to the new file it is given", async () => {
    const dir = await fresh();
    const content = Buffer.from("#!/bin/sh\necho 'goose 1.47.0'\n");
    const archive = await tarball(dir, content);
    const dest = path.join(dir, ".goose.download");
    await extractGoose({ tar: "/usr/bin/tar", archive, dest, source: "the mirror", env, maxBytes: 1024 });
    expect(await readFile(dest)).toEqual(content);
  });

  it("stops at the size cap and leaves no partial file", async () => {
    const dir = await fresh();
    // Compresses to almost nothing, as an archive made to fill a disk would.
    const archive = await tarball(dir, Buffer.alloc(4 * 1024 * 1024, 0));
    const dest = path.join(dir, ".goose.download");
    await expect(
      extractGoose({ tar: "/usr/bin/tar", archive, dest, source: "the mirror", env, maxBytes: 1024 * 1024 }),
    ).rejects.toThrow(
      "./goose in the Goose archive from the mirror unpacks to more than 1 MiB, far more than any Goose release; it was deleted.",
    );
    await expect(lstat(dest)).rejects.toThrow(/ENOENT/);
  });
});

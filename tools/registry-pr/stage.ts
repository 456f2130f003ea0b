// Writes the pull request's files into a folder laid out as the registry is.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { folderPackageJson, folderPlan, folderReadme, reformatted } from "./folder-plan.js";
import { runProgram } from "./process.js";
import { MODULE_DIR } from "./registry.js";
import { prettierArgs, repoRoot, type Tools } from "./tools.js";

/** The repository's files, tracked or new (not ignored), as `git ls-files` names them. */
export function repoFiles(): string[] {
  return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: repoRoot,
    encoding: "utf8",
  })
    .split("\n")
    .filter((file) => file !== "" && existsSync(path.join(repoRoot, file)));
}

/** Stages the folder under `out` (emptied first); returns the registry paths written. */
export async function stage(out: string, tools: Tools): Promise<string[]> {
  await rm(out, { recursive: true, force: true });
  const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
  const plan = folderPlan(repoFiles(), readme);
  for (const { from, to } of plan.copies) {
    await mkdir(path.dirname(path.join(out, to)), { recursive: true });
    if (from === "README.md") await writeFile(path.join(out, to), folderReadme(readme, plan));
    else await copyFile(path.join(repoRoot, from), path.join(out, to));
  }
  const rootPackage = JSON.parse(await readFile(path.join(repoRoot, "package.json"), "utf8"));
  const packageJson = `${MODULE_DIR}/package.json`;
  await writeFile(path.join(out, packageJson), folderPackageJson(rootPackage));
  const written = [...plan.copies.map((copy) => copy.to), packageJson].sort();
  const toFormat = written.filter((file) => reformatted(path.posix.relative(MODULE_DIR, file)));
  if (toFormat.length > 0) {
    const prettier = prettierArgs(tools);
    const formatted = await runProgram(process.execPath, [prettier.program, ...prettier.args, "--write", ...toFormat], {
      cwd: out,
    });
    if (formatted.code !== 0) throw new Error(`prettier --write of the folder's sources failed:\n${formatted.output}`);
  }
  return written;
}

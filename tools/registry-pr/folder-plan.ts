// What the coder/registry pull request carries of this repository, and where it goes
// (docs/development.md, "The registry pull request", says why each part travels and
// why the rest does not).
import path from "node:path";
import { rewriteRelativeLinks } from "./folder-rules.js";
import { folderUrl, IMAGES_DIR, MODULE, MODULE_DIR } from "./registry.js";

/** Repository files that travel as they are, into the module folder at the same path. */
const TRAVELS: RegExp[] = [
  // The module, and the Terraform tests the registry's CI runs in every folder that has one.
  /^(README\.md|main\.tf|variables\.tf|outputs\.tf)$/,
  /^[^/]+\.tftest\.hcl$/,
  // The registry's TypeScript tests (bun test, with its ~test helpers).
  /^main\.test\.ts$/,
  // The AgentAPI layer main.tf calls, with its README and tests.
  /^modules\/agentapi\//,
  // The bundles the coder_scripts embed, their TypeScript sources and the build that makes
  // one from the other: the code every workspace runs, readable, and rebuilt by a maintainer.
  /^scripts\/[^/]+\.cjs$/,
  /^src\//,
  /^build\.mjs$/,
  // The pages docs/README.md lists as travelling (for template authors, and the map of
  // src/ for its maintainers), and the templates the README links to.
  /^docs\/(operations|security|ai-governance|performance|architecture)\.md$/,
  /^examples\//,
];

/**
 * Files this repository formats with Biome (biome.jsonc), which the folder carries
 * formatted by the registry's prettier instead; the bundles are left out, as esbuild
 * writes them.
 */
export const reformatted = (file: string) => /\.(ts|mjs|json)$/.test(file) && !file.startsWith("scripts/");

export interface Copy {
  /** Repository path. */
  from: string;
  /** Path inside the registry. */
  to: string;
}

export interface FolderPlan {
  copies: Copy[];
  /** README image references to rewrite: repository reference → reference from the module folder. */
  images: Map<string, string>;
  /** README links to other files of the folder: repository reference → the file on GitHub (folderUrl). */
  links: Map<string, string>;
}

/** The registry's pictures are `registry/<namespace>/.images/<name>`, named after their module. */
const imageName = (file: string) => {
  const base = path.posix.basename(file);
  return base.startsWith(`${MODULE}-`) ? base : `${MODULE}-${base}`;
};

/** What travels, given the repository's files and the README's text. */
export function folderPlan(repoFiles: string[], readme: string): FolderPlan {
  const copies = repoFiles
    .filter((file) => TRAVELS.some((rule) => rule.test(file)))
    .map((file) => ({ from: file, to: `${MODULE_DIR}/${file}` }));
  const carried = new Set(copies.map((copy) => copy.from));
  const images = new Map<string, string>();
  const links = new Map<string, string>();
  rewriteRelativeLinks(readme, ({ target, image }) => {
    const [reference, fragment] = target.split("#") as [string, string | undefined];
    const file = path.posix.normalize(reference).replace(/\/$/, "");
    if (image) {
      if (!repoFiles.includes(file) || images.has(target)) return undefined;
      const to = `${IMAGES_DIR}/${imageName(file)}`;
      copies.push({ from: file, to });
      images.set(target, path.posix.relative(MODULE_DIR, to));
    } else if (carried.has(file)) {
      links.set(target, folderUrl("blob", file) + (fragment === undefined ? "" : `#${fragment}`));
    } else if ([...carried].some((carriedFile) => carriedFile.startsWith(`${file}/`))) {
      links.set(target, folderUrl("tree", file));
    }
    return undefined;
  });
  return { copies, images, links };
}

/**
 * The README as the folder carries it: its pictures point into the registry's images folder,
 * and its links to other files of the folder point at them on GitHub. A link to a file that
 * does not travel stays as it is, for the links check to report.
 */
export function folderReadme(readme: string, plan: Pick<FolderPlan, "images" | "links">): string {
  return rewriteRelativeLinks(readme, ({ target, image }) => (image ? plan.images : plan.links).get(target));
}

/** The folder's package.json: the build's exact pins from this repository's, so `npm install && npm run build` rebuilds the bundles. */
export function folderPackageJson(root: {
  name?: string;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}): string {
  const esbuild = root.devDependencies?.esbuild;
  if (!esbuild) throw new Error("package.json pins no esbuild in devDependencies");
  const folder = {
    name: root.name,
    private: true,
    type: "module",
    engines: root.engines,
    scripts: { build: "node build.mjs" },
    dependencies: root.dependencies,
    devDependencies: { esbuild },
  };
  return `${JSON.stringify(folder, null, 2)}\n`;
}

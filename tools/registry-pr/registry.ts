// Facts about coder/registry that the pull request's checks depend on, each read at
// coder/registry@6be121e4f6eabd2f248cb9c81953af4c95457634 (2026-08-21), the newest
// snapshot available to this project. Re-read the cited file before relying on a
// newer registry.

/** Where the folder goes, and the module address users write in `source`. */
export const NAMESPACE = "coder";
export const MODULE = "goose";
export const MODULE_DIR = `registry/${NAMESPACE}/modules/${MODULE}`;
export const IMAGES_DIR = `registry/${NAMESPACE}/.images`;
export const MODULE_SOURCE = `registry.coder.com/${NAMESPACE}/${MODULE}/coder`;

/**
 * Where GitHub shows a file of the folder once the pull request is merged. registry.coder.com
 * renders a module's README on its own page, with no base for a relative link to another file
 * of the folder, so the README links them here, as Coder's own modules do (for example
 * registry/coder/modules/agent-firewall/README.md links its config.yaml.tftpl so); its
 * pictures go to IMAGES_DIR, which the site serves.
 */
export const folderUrl = (kind: "blob" | "tree", file: string) =>
  `https://github.com/coder/registry/${kind}/main/${MODULE_DIR}/${file}`;
/** A link into the folder on GitHub; its group is the file's registry path. */
export const FOLDER_URL_PATTERN = new RegExp(
  `^https://github\\.com/coder/registry/(?:blob|tree)/main/(${MODULE_DIR}(?:/[^#?]*)?)(?:[#?]|$)`,
);

/**
 * The newest release tag, `release/coder/goose/v3.0.1`, and the kind of change this
 * pull request is: 4.0.0 removes inputs 3.0.1 had, a major change by CONTRIBUTING.md's
 * semver rules, so the `version:major` label and .github/scripts/version-bump.sh want
 * the next major in the README.
 */
export const PUBLISHED_VERSION = "3.0.1";
export const CHANGE: "patch" | "minor" | "major" = "major";

/** Icons under the registry's top-level `.icons/` that a module README may name (only the one this module uses). */
export const REGISTRY_ICONS = ["goose.svg"];

/** The scorer (.github/scorecard/score-modules.ts): which files it reads, and how much of each. */
export const SCORED_SUFFIXES = [".md", ".tf", ".tftest.hcl", ".test.ts", ".sh", ".tftpl"];
export const SCORER_MAX_FILE_CHARS = 30_000;
/** This project's budget for what the scorer reads of the folder, and the count the registry's budget talk uses. */
export const SCORER_TOKEN_BUDGET = 120_000;
export const CHARS_PER_TOKEN = 3.4;

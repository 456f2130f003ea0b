// The registry's version rule: a pull request labelled version:<patch|minor|major> must
// already carry, in each README `module` block whose `source` is the module's registry
// address, the version after the newest release tag for that kind of change
// (.github/scripts/version-bump.sh --ci at coder/registry@6be121e4: it rewrites those
// `version =` lines to the next version, formats the README with prettier, and fails
// when git then sees a change). The block scan follows that script's reading of a
// README: a block opens at a line starting with `module`, closes at the first line
// that is only `}`, and counts when one of its lines has `source ... =` and the address.

export type Change = "patch" | "minor" | "major";

/** The version after `current` (X.Y.Z) for a change of that kind. */
export function nextVersion(current: string, change: Change): string {
  const parts = /^(\d+)\.(\d+)\.(\d+)$/.exec(current);
  if (!parts) throw new Error(`"${current}" is not a version of the form X.Y.Z`);
  const [major, minor, patch] = parts.slice(1).map(Number) as [number, number, number];
  if (change === "major") return `${major + 1}.0.0`;
  if (change === "minor") return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
}

export interface VersionMention {
  /** 1-based line number. */
  line: number;
  /** The quoted version, or the line itself when it quotes none. */
  version: string;
}

const quoted = (line: string) => /"([^"]*)"/.exec(line)?.[1] ?? line.trim();

/** The `version =` lines of the `module` blocks in `text` that use `source`. */
export function moduleBlockVersions(text: string, source: string): VersionMention[] {
  const found: VersionMention[] = [];
  let block: Array<{ line: number; text: string }> | null = null;
  let usesSource = false;
  text.split("\n").forEach((line, index) => {
    if (/^\s*module\s/.test(line)) {
      block = [];
      usesSource = false;
      return;
    }
    if (block === null) return;
    block.push({ line: index + 1, text: line });
    if (/source.*=/.test(line) && line.includes(source)) usesSource = true;
    if (/^\s*}\s*$/.test(line)) {
      if (usesSource)
        for (const entry of block)
          if (/^\s*version\s*=/.test(entry.text)) found.push({ line: entry.line, version: quoted(entry.text) });
      block = null;
    }
  });
  return found;
}

/** Lines outside such blocks that name the address and a version together (comments in the examples). */
export function inlineVersions(text: string, source: string): VersionMention[] {
  const found: VersionMention[] = [];
  text.split("\n").forEach((line, index) => {
    const version = /\bversion\s*=\s*"([^"]*)"/.exec(line);
    if (line.includes(source) && version) found.push({ line: index + 1, version: version[1] as string });
  });
  return found;
}

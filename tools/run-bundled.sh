#!/usr/bin/env bash
# tools/run-bundled.sh NAME ENTRY [ARGS...]: sets up what npm run lifecycle needs, bundles the
# TypeScript tool ENTRY to .tmp/NAME.mjs and runs it with ARGS; how npm run lifecycle and
# npm run compat run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"
name="$1" entry="$2"
shift 2

bash tools/setup.sh --profile lifecycle
set -a
# shellcheck source=/dev/null
. .tools/env.sh
set +a

# Bundle to a private name first, so two runs at once never read a half-written file. The
# npm packages stay outside the bundle and load from node_modules as they are: some are
# CommonJS that require() Node's built-ins, which an ES module bundle cannot do.
mkdir -p .tmp
node_modules/.bin/esbuild "$entry" --bundle --platform=node --format=esm --target=node18 \
  --packages=external --log-level=warning --outfile=".tmp/$name.$$.mjs"
mv -f ".tmp/$name.$$.mjs" ".tmp/$name.mjs"
exec node ".tmp/$name.mjs" "$@"

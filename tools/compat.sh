#!/usr/bin/env bash
# npm run compat (options: -- --help): the module's lifecycle against one Goose binary, a
# verdict per behaviour (docs/development.md). Set up and bundled as tools/lifecycle.sh does.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

bash tools/setup.sh --profile lifecycle
set -a
# shellcheck source=/dev/null
. .tools/env.sh
set +a

# A private name first, so two runs at once never read a half-written bundle; the npm
# packages stay outside it and load from node_modules (see tools/lifecycle.sh).
mkdir -p .tmp
node_modules/.bin/esbuild tools/compat/main.ts --bundle --platform=node --format=esm --target=node18 \
  --packages=external --log-level=warning --outfile=".tmp/compat.$$.mjs"
mv -f ".tmp/compat.$$.mjs" .tmp/compat.mjs
exec node .tmp/compat.mjs "$@"

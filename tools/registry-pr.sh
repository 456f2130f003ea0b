#!/usr/bin/env bash
# npm run registry-pr [-- --format FILE...]: the coder/registry pull request's folder, written
# into .tmp/registry-pr/ and put through the registry's checks (tools/registry-pr/main.ts;
# docs/development.md, "The registry pull request"). tools/test.sh runs it as a step.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

bash tools/setup.sh
set -a
# shellcheck source=/dev/null
. .tools/env.sh
set +a
# A private bundle name first, so two runs at once never read a half-written file; the npm
# packages load from node_modules (see tools/run-bundled.sh).
mkdir -p .tmp
node_modules/.bin/esbuild tools/registry-pr/main.ts --bundle --platform=node --format=esm --target=node18 \
  --packages=external --log-level=warning --outfile=".tmp/registry-pr.$$.mjs"
mv -f ".tmp/registry-pr.$$.mjs" .tmp/registry-pr.mjs
exec node .tmp/registry-pr.mjs "$@"

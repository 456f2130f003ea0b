#!/usr/bin/env bash
# The main job (npm run lifecycle; options: -- --help): play a workspace's life with this
# module on this machine and report what survived (docs/development.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

bash tools/setup.sh --profile lifecycle
set -a
# shellcheck source=/dev/null
. .tools/env.sh
set +a

# Bundle to a private name first, so two runs at once never read a half-written file. The
# npm packages stay outside the bundle and load from node_modules as they are: some are
# CommonJS that require() Node's built-ins, which an ES module bundle cannot do.
mkdir -p .tmp
node_modules/.bin/esbuild tools/lifecycle/main.ts --bundle --platform=node --format=esm --target=node18 \
  --packages=external --log-level=warning --outfile=".tmp/lifecycle.$$.mjs"
mv -f ".tmp/lifecycle.$$.mjs" .tmp/lifecycle.mjs
exec node .tmp/lifecycle.mjs "$@"

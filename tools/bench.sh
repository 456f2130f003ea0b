#!/usr/bin/env bash
# Timing measurements (bench/): prints numbers, asserts nothing.
#   npm run bench -- [runs per variant, default 5] [stop|start|snapshot|scaling|runtime|supervisor ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"
bash tools/setup.sh
set -a
# shellcheck source=/dev/null
. .tools/env.sh
set +a
mkdir -p .tmp
# The npm packages load from node_modules (see tools/run-bundled.sh).
node_modules/.bin/esbuild bench/main.ts --bundle --platform=node --format=esm --target=node18 \
  --packages=external --log-level=warning --outfile=.tmp/bench-main.mjs
exec node .tmp/bench-main.mjs "$@"

#!/usr/bin/env bash
# Timing measurements (bench/): prints numbers, asserts nothing.
#   npm run bench -- [runs per variant, default 5]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"
bash tools/setup.sh
set -a
# shellcheck source=/dev/null
. .tools/env.sh
set +a
mkdir -p .tmp
# npm run bench -- supervisor [runs]: bench/supervisor.ts instead of bench/stop.ts.
bench=stop
if [ -f "bench/${1:-}.ts" ]; then bench="$1" && shift; fi
node_modules/.bin/esbuild "bench/$bench.ts" --bundle --platform=node --format=esm --target=node18 \
  --log-level=warning --outfile=".tmp/bench-$bench.mjs"
exec node ".tmp/bench-$bench.mjs" "$@"

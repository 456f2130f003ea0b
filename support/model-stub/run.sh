#!/usr/bin/env bash
# Bundles support/model-stub/cli.ts with the repository's esbuild and runs it:
# prints the stub's URL, then serves until Ctrl-C. Options: see --help.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
mkdir -p "$root/.tmp"
# A private name first, so two runs at once never read a half-written file.
"$root/node_modules/.bin/esbuild" "$root/support/model-stub/cli.ts" --bundle --platform=node --format=esm --target=node18 \
  --log-level=warning --outfile="$root/.tmp/model-stub.$$.mjs"
mv -f "$root/.tmp/model-stub.$$.mjs" "$root/.tmp/model-stub.mjs"
exec node "$root/.tmp/model-stub.mjs" "$@"

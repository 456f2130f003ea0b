#!/usr/bin/env bash
# The main job: play a Coder workspace's life with this module on this machine
# (terraform apply of examples/workspace-template, or examples/task-template with
# --task; the rendered start and stop coder_scripts, real AgentAPI, the Goose test
# double) and report what survived.
#
#   npm run lifecycle                 # setup of what it uses (cached after the first run), then one restart
#   npm run lifecycle -- --task       # the same for a Coder task
#   npm run lifecycle -- --restarts 3 --keep
#   GOOSE_BIN=/abs/path/to/goose npm run lifecycle   # a real goose + the local model stub
#   npm run lifecycle -- --help
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

# Setup talks on stderr/stdout with a "setup:" prefix; keep it short when cached.
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

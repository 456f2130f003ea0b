#!/usr/bin/env bash
# Rewrites the README's picture: runs the browser test (test/integration/browser.test.ts),
# which saves the chat after a restart as docs/images/chat-after-restart.png.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

bash tools/setup.sh
set -a
# shellcheck source=/dev/null
. .tools/env.sh
set +a
if [[ -z "$CHROMIUM_BIN" || -z "$AGENTAPI_BIN_UI" ]]; then
  echo "screenshots: ${CHROMIUM_SKIP:-$AGENTAPI_UI_SKIP}" >&2
  exit 1
fi
SCREENSHOT_DIR="$root/docs/images" npx vitest run --project integration test/integration/browser.test.ts
ls -l docs/images/*.png

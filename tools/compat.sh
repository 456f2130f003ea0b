#!/usr/bin/env bash
# npm run compat (options: -- --help): the module's lifecycle against one Goose binary, a
# verdict per behaviour (docs/development.md).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-bundled.sh" compat tools/compat/main.ts "$@"

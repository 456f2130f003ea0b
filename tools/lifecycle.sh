#!/usr/bin/env bash
# The main job (npm run lifecycle; options: -- --help): play a workspace's life with this
# module on this machine and report what survived (docs/development.md).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-bundled.sh" lifecycle tools/lifecycle/main.ts "$@"

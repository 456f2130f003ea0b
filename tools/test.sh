#!/usr/bin/env bash
# Runs every test: setup, type check, lint gates, reproducible build, Terraform
# checks, unit tests, the Goose double's self-test, and integration tests against
# real AgentAPI binaries.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

bash tools/setup.sh
# shellcheck source=/dev/null
. .tools/env.sh
# shellcheck source=tools/lint.sh
. tools/lint.sh

failed=()
step() {
  local name="$1"
  shift
  local started=$SECONDS
  echo "==> $name"
  if "$@"; then
    echo "==> $name: ok ($((SECONDS - started)) s)"
  else
    echo "==> $name: FAILED ($((SECONDS - started)) s)"
    failed+=("$name")
  fi
}

check_build_reproducible() {
  local before
  before="$(mktemp -d)"
  cp scripts/*.mjs "$before/"
  node build.mjs
  local status=0
  for f in scripts/*.mjs; do
    if ! cmp -s "$f" "$before/$(basename "$f")"; then
      echo "$f differs from the committed build: run 'npm run build' and commit scripts/." >&2
      status=1
    fi
  done
  rm -rf "$before"
  return "$status"
}

tf_validate() {
  local dir="$1"
  (cd "$dir" && "$TF" init -backend=false -input=false -no-color >/dev/null && "$TF" validate -no-color)
}

step "typecheck" npx tsc -p .
step "lint: biome" lint_ts
step "lint: shellcheck" lint_shell
step "lint: tflint" lint_terraform
step "build is reproducible" check_build_reproducible
step "terraform fmt" "$TF" fmt -check -recursive -diff
step "terraform validate (root)" tf_validate .
step "terraform validate (modules/agentapi)" tf_validate modules/agentapi
step "terraform validate (examples/task-template)" tf_validate examples/task-template
step "terraform validate (examples/workspace-template)" tf_validate examples/workspace-template
step "terraform test (root)" "$TF" test -no-color -test-directory=test/terraform
step "terraform test (modules/agentapi)" "$TF" -chdir=modules/agentapi test -no-color
step "unit tests" npx vitest run --project unit
step "goose double self-test" env AGENTAPI_BIN="$AGENTAPI_BIN_NEW" bash test/goose-double/selftest.sh
step "integration tests" npx vitest run --project integration

if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all test steps passed"

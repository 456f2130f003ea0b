# shellcheck shell=bash
# shellcheck disable=SC2034 # the globals the steps set are read by tools/setup.sh (env.sh, summary)
# tools/setup.sh's steps for npm run registry-pr (tools/registry-pr/): the coder/registry
# checks' own tools; sourced by it, not run. The full profile installs them; the
# lifecycle profile does not use them.

# ---- 8. Registry checks: prettier with its shell plugin and a tokenizer (npm), typos (PyPI)
# step_registry_npm: npm ci of tools/registry-pr/package(-lock).json into .tools/registry-pr.
# Sets REGISTRY_PR_MODULES, or REGISTRY_PR_SKIP saying why it is missing.
step_registry_npm() {
  local dir="$TOOLS_DIR/registry-pr" src="$REPO_ROOT/tools/registry-pr" stamp want t
  stamp="$TOOLS_DIR/stamps/registry-pr-npm"
  want="$(sha256_of "$src/package.json" "$src/package-lock.json") node-$(node --version)"
  REGISTRY_PR_MODULES="$dir/node_modules" REGISTRY_PR_SKIP=""
  if [[ "$(cat "$stamp" 2>/dev/null)" == "$want" && -x "$dir/node_modules/.bin/prettier" ]]; then
    log "registry checks' npm tools ($(rel "$dir/node_modules")) ... cached"
    return
  fi
  if not_in_profile "the registry checks' npm tools (prettier, prettier-plugin-sh, a tokenizer)"; then
    REGISTRY_PR_MODULES="" REGISTRY_PR_SKIP="$PROFILE_SKIP"
    return
  fi
  t="$(now_ms)"
  rm -f "$stamp"
  mkdir -p "$dir"
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  (cd "$dir" && run_logged registry-pr-npm npm ci --no-audit --no-fund) ||
    die "npm ci of tools/registry-pr/package.json failed; see $(rel "$LOG_DIR/registry-pr-npm.log")." \
      "Check that the npm registry is reachable and serves the versions package-lock.json pins."
  printf '%s\n' "$want" >"$stamp"
  log "registry checks' npm tools installed in $(since "$t") ($(rel "$dir/node_modules"))"
}

typos_version_of() { "$1" --version 2>/dev/null | sed -n 's/^typos-cli //p'; }

# step_typos: typos from its PyPI wheel (the same binary as the crate-ci/typos action), pinned
# by hash for Linux x86_64 and aarch64 and macOS x86_64 and arm64. Sets TYPOS_BIN or TYPOS_SKIP.
step_typos() {
  local bin="$TOOLS_DIR/typos/v$TYPOS_VERSION/typos" t
  TYPOS_BIN="$bin" TYPOS_SKIP=""
  if [[ "$(typos_version_of "$bin")" == "$TYPOS_VERSION" ]]; then
    log "typos $TYPOS_VERSION ($(rel "$bin")) ... cached"
    return
  fi
  if not_in_profile "typos $TYPOS_VERSION"; then
    TYPOS_BIN="" TYPOS_SKIP="$PROFILE_SKIP"
    return
  fi
  t="$(now_ms)"
  wheel_binary "typos $TYPOS_VERSION" typos "$TYPOS_VERSION" "$bin" typos \
    "Linux and macOS on x86_64 and arm64" "${TYPOS_SHA256[@]}"
  [[ "$(typos_version_of "$bin")" == "$TYPOS_VERSION" ]] || die "$(rel "$bin") --version does not report $TYPOS_VERSION."
  log "typos $TYPOS_VERSION installed from PyPI in $(since "$t") ($(rel "$bin"))"
}

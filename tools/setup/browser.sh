# shellcheck shell=bash
# shellcheck disable=SC2034 # the globals the steps set are read by tools/setup.sh (env.sh, summary)
# tools/setup.sh's steps for the browser test: Chromium and AgentAPI with its chat UI; sourced by it, not run.

# ---- 7. Browser test (the full profile)
# In the lifecycle profile these steps only look for what an earlier run left.

# Another package manager (unattended-upgrades on a fresh machine, say) may hold apt's locks
# for minutes: apt-get install waits for dpkg's (DPkg::Lock::Timeout, APT 1.9.11+), and
# apt-get update, which never waits for the lists' lock, is tried again, both up to this bound.
APT_LOCK_WAIT_S=300

apt_update_waiting() {
  local waited=0
  until run_logged chromium-apt-update apt-get update -q; do
    grep -q "Could not get lock" "$LOG_DIR/chromium-apt-update.log" && ((waited < APT_LOCK_WAIT_S)) || return 1
    ((waited > 0)) || log "another package manager holds apt's lock; waiting up to $APT_LOCK_WAIT_S s"
    sleep 5
    waited=$((waited + 5))
  done
}

# step_chromium: CHROMIUM_BIN, or empty with CHROMIUM_SKIP saying how to get it. The emoji
# font draws the "⏱" Goose prints after each reply in the screenshots.
step_chromium() {
  local bin="" got t
  CHROMIUM_BIN="" CHROMIUM_SKIP=""
  bin="$(command -v chromium || command -v chromium-browser || true)"
  if [[ -z "$bin" && "$PROFILE" == full && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    t="$(now_ms)"
    log "installing Debian's chromium with apt-get (log: $(rel "$LOG_DIR/chromium-apt.log"))"
    if apt_update_waiting &&
      run_logged chromium-apt env DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_WAIT_S" \
        install -y -q chromium fonts-noto-color-emoji; then
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

# step_agentapi_ui: AGENTAPI_BIN_UI, the default AgentAPI with its chat UI (docs/browser-test.md),
# or empty with AGENTAPI_UI_SKIP saying why.
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

# shellcheck shell=bash
# Shared helpers for tools/*.sh. Source it; do not execute it. TOOLS_DIR is the git-ignored
# cache of everything setup.sh installs.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
TOOLS_DIR="$REPO_ROOT/.tools"
LOG_DIR="$TOOLS_DIR/logs"
LOG_PREFIX="${LOG_PREFIX:-setup}"

log() { printf '%s: %s\n' "$LOG_PREFIX" "$*"; }
warn() { printf '%s: WARNING: %s\n' "$LOG_PREFIX" "$*" >&2; }
die() {
  printf '%s: ERROR: %s\n' "$LOG_PREFIX" "$1" >&2
  shift
  local line
  for line in "$@"; do printf '%s:   %s\n' "$LOG_PREFIX" "$line" >&2; done
  exit 1
}

# module_default NAME: the release the module installs when a template leaves the version
# variable NAME (goose_version, agentapi_version) unset, without a leading "v": its entry in
# main.tf's tested_versions, the one place it is written.
module_default() {
  local value
  value="$(awk -v name="$1" '
    /^  tested_versions = \{/ { inside = 1; next }
    inside && /^  \}/ { exit }
    inside && $1 == name && $2 == "=" { gsub(/"/, "", $3); print $3; exit }
  ' "$REPO_ROOT/main.tf")"
  [[ -n "$value" ]] || die "main.tf's tested_versions has no entry for $1"
  printf '%s' "${value#v}"
}

rel() { local p="$1"; printf '%s' "${p#"$REPO_ROOT"/}"; }

now_ms() { date +%s%3N; }

# since MS: seconds elapsed since MS (from now_ms), two decimals.
since() {
  local d=$(( $(now_ms) - $1 ))
  printf '%d.%02ds' $((d / 1000)) $(((d % 1000) / 10))
}

# version_ge A B: true when version A >= version B (dotted numbers; "go" prefix and
# pre-release suffixes like -rc1 are ignored).
version_ge() {
  local a="${1#go}" b="${2#go}"
  a="${a%%[-+]*}"; b="${b%%[-+]*}"
  [[ "$(printf '%s\n%s\n' "$b" "$a" | sort -V | head -n1)" == "$b" ]]
}

# run_logged NAME CMD...: run CMD with stdout+stderr to $LOG_DIR/NAME.log.
# On failure print the log's tail and return CMD's status.
run_logged() {
  local name="$1"; shift
  local logf="$LOG_DIR/$name.log" rc=0
  mkdir -p "$LOG_DIR"
  { printf '# %s\n# cwd: %s\n# cmd:' "$(date -u +%FT%TZ)" "$PWD"; printf ' %q' "$@"; printf '\n'; } >"$logf"
  "$@" >>"$logf" 2>&1 || rc=$?
  if ((rc != 0)); then
    printf '%s: command failed (exit %d): %s\n' "$LOG_PREFIX" "$rc" "$*" >&2
    printf '%s: last lines of %s:\n' "$LOG_PREFIX" "$(rel "$logf")" >&2
    tail -n 25 "$logf" | sed 's/^/    | /' >&2
  fi
  return "$rc"
}

sha256_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

go_local_version() { local v; v="$(go env GOVERSION)"; v="${v#go}"; printf '%s' "${v%% *}"; }

go_may_switch_toolchain() { [[ "$(go env GOTOOLCHAIN)" == *auto* ]]; }

# require_go_for MODULE@VERSION: fail clearly when the module's go directive needs a
# newer Go than installed and GOTOOLCHAIN forbids switching (e.g. GOTOOLCHAIN=local).
require_go_for() {
  local modver="$1" need have
  need="$(go list -m -json "$modver" 2>/dev/null | sed -n 's/^[[:space:]]*"GoVersion": "\(.*\)",\{0,1\}$/\1/p' | head -n1)" || true
  [[ -n "$need" ]] || return 0 # unknown: let the build itself decide
  have="$(go_local_version)"
  if ! version_ge "$have" "$need" && ! go_may_switch_toolchain; then
    die "$modver needs Go >= $need but Go $have is installed and GOTOOLCHAIN=$(go env GOTOOLCHAIN)." \
      "Install Go >= $need (https://go.dev/dl/ or your package manager), or allow a toolchain" \
      "download with GOTOOLCHAIN=auto, then rerun tools/setup.sh."
  fi
}

# node_engines_minimum: the oldest Node.js package.json's "engines" allows, as X.Y.Z
# (">=18.19" gives 18.19.0).
node_engines_minimum() {
  local v
  v="$(sed -n 's/^[[:space:]]*"node":[[:space:]]*">=\([0-9.]*\)".*/\1/p' "$REPO_ROOT/package.json" | head -n1)"
  [[ -n "$v" ]] || die "package.json has no \"engines\": { \"node\": \">=X.Y\" }"
  while [[ "$v" != *.*.* ]]; do v+=.0; done
  printf '%s' "$v"
}

# wrapper_node_version: the Node.js version the coder_script wrapper installs (its one source).
wrapper_node_version() {
  local v
  v="$(sed -n 's/^NODE_VERSION="\([0-9.]*\)"$/\1/p' "$REPO_ROOT/modules/agentapi/templates/run.sh.tftpl")"
  [[ -n "$v" ]] || die "modules/agentapi/templates/run.sh.tftpl has no NODE_VERSION=\"X.Y.Z\" line"
  printf '%s' "$v"
}

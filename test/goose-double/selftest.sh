#!/usr/bin/env bash
# Self-check for the Goose test double; tools/test.sh runs it.
#
#   test/goose-double/selftest.sh            CLI + DB + PTY checks (python3)
#   AGENTAPI_BIN=/path/to/agentapi test/goose-double/selftest.sh
#                                            ... plus an end-to-end run under AgentAPI
#
# Without AGENTAPI_BIN it uses .tools/agentapi/v0.12.*/agentapi when present. Exit 0 = all passed.
# No step waits for a fixed time: each waits for what it needs (text on the terminal, a line in
# the event log, rows in the DB, an exit). SELFTEST_TIMEOUT (seconds, default 20) only bounds
# such a wait, so a run that would hang fails instead.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
G="$HERE/goose"
REPO="$(cd "$HERE/../.." && pwd -P)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/goose-double-selftest.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
FAILS=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; FAILS=$((FAILS + 1)); }
check() { # check NAME COMMAND...
  local name="$1"; shift
  if "$@"; then ok "$name"; else bad "$name"; fi
}
has() { grep -qF -- "$2" <<<"$1"; } # has TEXT NEEDLE
has_all() { # has_all TEXT NEEDLE...
  local text="$1" needle
  shift
  for needle in "$@"; do has "$text" "$needle" || return 1; done
}
LIMIT="${SELFTEST_TIMEOUT:-20}"
wait_for() { # wait_for COMMAND... : poll until COMMAND succeeds; false after $LIMIT seconds
  local end=$((SECONDS + LIMIT))
  until "$@"; do
    ((SECONDS < end)) || { printf 'timed out after %s s waiting for: %s\n' "$LIMIT" "$*" >&2; return 1; }
    sleep 0.05
  done
}

fresh_home() { # fresh_home NAME -> sets H, DB, EV
  H="$WORK/$1"; mkdir -p "$H/home" "$H/proj"
  DB="$H/home/.local/share/goose/sessions/sessions.db"
  EV="$H/events.jsonl"
}
g() { # g ARGS... : run the double in $H/proj with a clean, configured environment
  (cd "$H/proj" && env -i PATH="$PATH" HOME="$H/home" GOOSE_DOUBLE_EVENT_LOG="$EV" \
    GOOSE_PROVIDER="${P-openai}" GOOSE_MODEL="${M-m}" GOOSE_TELEMETRY_ENABLED="${TEL-false}" \
    ${VER:+GOOSE_DOUBLE_VERSION=$VER} ${LAYERS:+GOOSE_ADDITIONAL_CONFIG_FILES=$LAYERS} ${RESUME_ERROR:+GOOSE_DOUBLE_RESUME_ERROR_FILE=$RESUME_ERROR} GOOSE_DOUBLE_TURN_MS="${TURN-50}" "$G" "$@")
}
q() { # q SQL : run SQL on the double's DB; rows as the sqlite3 shell prints them (a|b, NULL empty)
  python3 -c '
import sqlite3, sys, urllib.parse
db = sqlite3.connect("file:%s?mode=rw" % urllib.parse.quote(sys.argv[1]), uri=True, isolation_level=None)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))' "$DB" "$1"
}
run_g() { # run_g ARGS... : "RC:OUTPUT" of the double (stdout and stderr; stdin empty)
  local out rc=0
  out="$(g "$@" 2>&1 </dev/null)" || rc=$?
  printf '%s:%s' "$rc" "$out"
}
streams() { # streams ARGS... : "RC|STDOUT as od -c shows it|STDERR" of the double (stdin empty)
  local rc=0
  g "$@" >"$H/out" 2>"$H/err" </dev/null || rc=$?
  printf '%s|%s|%s' "$rc" "$(od -An -c "$H/out" | tr -s ' ')" "$(cat "$H/err")"
}
bytes() { printf '%b' "$1" | od -An -c | tr -s ' '; } # bytes TEXT : TEXT (\n escapes read) as streams shows it
events() { # events NAME : the event log's events called NAME, one JSON object a line
  grep -F "\"event\": \"$1\"" "$EV" || true
}
field() { # field KEY : print that key of each JSON line on stdin
  python3 -c 'import json,sys; [print(json.dumps(json.loads(l).get(sys.argv[1]), ensure_ascii=False)) for l in sys.stdin if l.strip()]' "$1"
}


# The checks, by topic; each part runs in this shell, after the one before it.
# shellcheck source=test/goose-double/selftest/cli.sh
. "$HERE/selftest/cli.sh"
# shellcheck source=test/goose-double/selftest/pty.sh
. "$HERE/selftest/pty.sh"
# shellcheck source=test/goose-double/selftest/agentapi.sh
. "$HERE/selftest/agentapi.sh"

echo
if [[ "$FAILS" -eq 0 ]]; then echo "all checks passed"; else echo "$FAILS check(s) failed"; exit 1; fi

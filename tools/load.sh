#!/usr/bin/env bash
# A busy machine on demand: one CPU hog per core, so the tests meet what a
# workspace meets while a build keeps it busy (docs/development.md, "Under
# load"). tools/test.sh sources this and starts the hogs when TEST_UNDER_LOAD=1;
# run directly, it runs one command under load:
#   bash tools/load.sh npx vitest run --project integration test/integration/stop.test.ts
# The hogs end with the shell that started them: at its exit (any exit: a
# failure, Ctrl+C) by the EXIT trap, and if that shell is killed outright, each
# hog sees its parent gone and ends by itself.

LOAD_PIDS=()

load_start() {
  local cores parent=$$ i
  cores="$(nproc)"
  for ((i = 0; i < cores; i++)); do
    # A shell builtin in a loop: all CPU, no I/O, and it checks its parent each round.
    bash -c 'while kill -0 "$1" 2>/dev/null; do :; done' load-hog "$parent" &
    LOAD_PIDS+=("$!")
  done
  echo "==> under load: ${cores} CPU hog(s) (PIDs ${LOAD_PIDS[*]}); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

load_stop() {
  ((${#LOAD_PIDS[@]})) || return 0
  kill "${LOAD_PIDS[@]}" 2>/dev/null
  # Each hog ends by that SIGTERM, so wait reports 143: not a failure, and under
  # tools/test.sh's `set -e` it would end the run as one.
  wait "${LOAD_PIDS[@]}" 2>/dev/null || true
  echo "==> under load: CPU hogs stopped; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  LOAD_PIDS=()
}

# Ctrl+C and SIGTERM end the shell through its EXIT trap, which stops the hogs.
load_traps() {
  trap load_stop EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -uo pipefail
  (($#)) || {
    echo "usage: bash tools/load.sh COMMAND [ARG...]: runs COMMAND with every core kept busy" >&2
    exit 2
  }
  load_traps
  load_start
  "$@"
  status=$?
  exit "$status"
fi

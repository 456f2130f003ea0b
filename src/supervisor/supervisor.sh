# shellcheck shell=sh
# The supervisor the start leaves beside AgentAPI (start/start-supervisor.ts): a
# POSIX sh loop, so that what runs for the workspace's whole life costs about
# a megabyte, not a JavaScript runtime. It watches /proc for AgentAPI's exit
# and Goose's sessions database for a turn's end, and starts the start
# script's own code (restart and autosave modes, supervisor.ts) only then:
# the restart policy and the verified save stay there, in TypeScript.
#
# /bin/sh -c runs it, with $0 = goose-module-supervisor and $1 = the module
# folder, so the command line says whose supervisor it is; everything else
# comes in the environment, never as source. No startup file is read: sh
# reads none when it is not interactive.

dir=$1
script=$CODER_MODULE_SCRIPT
settings=$CODER_MODULE_SETTINGS
runtime=$GOOSE_MODULE_RUNTIME
loader=$GOOSE_MODULE_LOADER
pid_file=$GOOSE_MODULE_AGENTAPI_PID_FILE
db=$GOOSE_MODULE_SESSIONS_DB
note=$GOOSE_MODULE_WATCH_NOTE
no_restart=$GOOSE_MODULE_NO_RESTART
token_env=$GOOSE_MODULE_TOKEN_ENV
agent_log=$GOOSE_MODULE_AGENTAPI_LOG
own_log=$GOOSE_MODULE_SUPERVISOR_LOG
log_max=$GOOSE_MODULE_LOG_MAX_BYTES
log_keep=$GOOSE_MODULE_LOG_GENERATIONS
own=$GOOSE_MODULE_SUPERVISOR_PID
gave_up=$GOOSE_MODULE_GAVE_UP
# Nothing this loop starts inherits them (AgentAPI and Goose least of all).
unset CODER_MODULE_SCRIPT CODER_MODULE_SETTINGS GOOSE_MODULE_RUNTIME GOOSE_MODULE_LOADER \
  GOOSE_MODULE_AGENTAPI_PID_FILE GOOSE_MODULE_SESSIONS_DB GOOSE_MODULE_WATCH_NOTE \
  GOOSE_MODULE_NO_RESTART GOOSE_MODULE_TOKEN_ENV GOOSE_MODULE_AGENTAPI_LOG GOOSE_MODULE_LOG_MAX_BYTES \
  GOOSE_MODULE_LOG_GENERATIONS GOOSE_MODULE_SUPERVISOR_LOG GOOSE_MODULE_SUPERVISOR_PID GOOSE_MODULE_GAVE_UP
mark=$dir/supervisor.mark
said=$gave_up.said
child=
helper=
nap=

log() { printf '%s goose-module: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1"; }

# True when $1 is a live process, not a zombie (a crashed AgentAPI stays one
# where nothing reaps it); its start time, which a recycled PID does not
# share, goes to $born (fields 3 and 22 of proc(5)'s stat, after the name).
alive() {
  line=
  read -r line 2> /dev/null < "/proc/$1/stat" || return 1
  set -f
  # shellcheck disable=SC2086 # split on purpose, into the fields after the name
  set -- ${line##*) }
  set +f
  born=${20:-}
  case $1 in Z | X | x) return 1 ;; esac
}

claimed() {
  held=
  read -r held 2> /dev/null < "$own"
  [ "$held" = "$$" ]
}

leave() {
  rm -f "$said"
  if claimed; then rm -f "$own"; fi
  exit "$1"
}

# SIGTERM to every child of this shell, found in /proc (field 4 of stat is
# the parent): the signal can come between starting a helper and `helper=$!`,
# and a helper the stand-down missed would poll AgentAPI for its whole bound
# while the stop runs, and outlive it.
term_children() {
  for stat in /proc/[0-9]*/stat; do
    line=
    read -r line 2> /dev/null < "$stat" || continue
    set -f
    # shellcheck disable=SC2086 # split on purpose, into the fields after the name
    set -- ${line##*) }
    set +f
    if [ "${2:-}" = "$$" ]; then
      stat=${stat#/proc/}
      kill -TERM "${stat%/stat}" 2> /dev/null
    fi
  done
}

# The stop's SIGTERM: whatever runs ends first (a restart withdraws the
# AgentAPI it was starting), then the PID file goes, and this process exits,
# which the stop waits for. Every child is waited for, not only signalled: on
# a busy machine one could otherwise outlive the stop that left nothing running.
stand_down() {
  claimed || exit 0
  term_children
  wait
  log "stood down: the stop script asked the supervisor to stand down"
  leave 0
}
trap stand_down TERM

# `sleep` in the background: `wait` returns at once when SIGTERM arrives.
# A quarter second where sleep takes fractions (GNU, BusyBox), else a second.
if sleep 0.01 2> /dev/null; then tick=0.25; else tick=1; fi
pause() {
  sleep "$tick" &
  nap=$!
  wait "$nap"
  nap=
}

# Why the supervisor gave up, for the next start (lastGiveUp in
# process.ts) and the user: the time on the first line, the reason after it.
# This function is the file's one writer, for the restart helper too, which
# hands it the reason (restart, below). A new file is renamed over the name,
# so a reader sees one or the other, and a link planted there is replaced,
# never written through. The file is never removed: the next start ignores
# one older than the last launch.
record_give_up() {
  tmp=$gave_up.$$
  rm -f "$tmp"
  if (umask 077 && set -C && printf '%s\n%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" > "$tmp") 2> /dev/null; then
    mv -f "$tmp" "$gave_up"
  fi
  rm -f "$tmp"
  log "gave up: $1"
}

# Run in the background (run_mode), so in a child process of its own: what it
# changes is that child's alone, and its `exec` keeps $! the runtime's PID.
# Only a restart, which launches Goose, keeps the gateway token's variable.
start_helper() {
  mode=$1
  if [ "$mode" != goose-module-restart ] && [ -n "$token_env" ]; then unset "$token_env"; fi
  # Descriptor 3: a new private file for the restart helper's reason, should
  # it give up (giveUp in supervisor.ts); the umask goes back before the
  # runtime starts, so AgentAPI and Goose get the user's.
  if [ "$mode" = goose-module-restart ]; then
    was=$(umask)
    umask 077
    set -C
    { command exec 3> "$said"; } 2> /dev/null || exec 3> /dev/null
    set +C
    umask "$was"
  fi
  CODER_MODULE_SCRIPT=$script
  CODER_MODULE_SETTINGS=$settings
  export CODER_MODULE_SCRIPT CODER_MODULE_SETTINGS
  exec "$runtime" -e "$loader" "$@"
}

# Starts the start script's code in the background, as the coder_script does
# (run.sh.tftpl): the runtime runs the coder_script's loader, which decodes the
# code from CODER_MODULE_SCRIPT.
run_mode() {
  start_helper "$@" &
}

# Goose writes a turn's user rows when it is sent and its reply when it ends
# (sessions.db, in WAL mode). A change since the mark starts one autosave
# helper, which saves at AgentAPI's next "stable"; a change while one runs
# starts another after it. `-nt` compares nanoseconds in dash and bash; where
# it compares seconds, "not older" still misses nothing.
autosave() {
  for f in "$db-wal" "$db"; do
    if [ -e "$f" ] && ! [ "$mark" -nt "$f" ]; then
      (umask 077 && : > "$mark")
      dirty=1
    fi
  done
  if [ -n "$helper" ]; then
    alive "$helper" && [ "$born" = "$helper_born" ] && return
    wait "$helper"
    helper=
  fi
  [ "$dirty" = 1 ] || return
  dirty=0
  run_mode goose-module-autosave "$dir"
  helper=$!
  alive "$helper"
  helper_born=$born
}

# Exit codes of the restart mode (supervisor.ts): 0 AgentAPI runs again,
# 10 the restart failed and the policy decides again, 20 stand down, 30 give
# up, for the reason the helper wrote on descriptor 3 (start_helper).
# The policy gives up after a bounded number of failures, so this loop ends.
# With agent_firewall and a file that confines Goose the workspace user can
# write, the start says why nothing may be relaunched (supervisorRefusals in
# launch/containment.ts), and nothing runs: the give-up and the log say so,
# and the next workspace start repeats it.
restart() {
  if [ -n "$no_restart" ]; then
    record_give_up "$no_restart"
    leave 1
  fi
  while :; do
    rm -f "$said"
    run_mode goose-module-restart "$dir" "$1"
    child=$!
    wait "$child"
    code=$?
    child=
    case $code in
      0) return ;;
      10) continue ;;
      20) leave 0 ;;
      30) record_give_up "$(cat "$said" 2> /dev/null)" ;;
      *) record_give_up "the restart helper failed (exit code $code; see the lines above). Restart the workspace" ;;
    esac
    leave 1
  done
}

# AgentAPI appends to logs/agentapi.log for as long as it runs, and this loop
# and its helpers to logs/supervisor.log; this function is the one that
# rotates them (the launch only opens them, lib/detached.ts), so a log left
# full by an earlier run goes at the first look after a launch. The offset
# of the writer's standard output (its fdinfo's "pos", read without a fork)
# is where the next line goes, the log's size: $1 is the writer's PID, $2
# its log. Once that reaches the cap, the generations move up, a copy
# becomes <log>.1, and the log is emptied through the writer's own
# descriptor, never through a link planted at its name; the writer appends,
# so it goes on at the new end. Lines written between the copy and the
# emptying are lost. $3 is the offset the log was last emptied at, which
# keeps one full log from being moved twice before it is written to again;
# `rotated` says the offset for the next call.
bound_log() {
  rotated=$3
  [ -n "$log_max" ] && [ -n "$2" ] || return 0
  pos=
  { read -r _ pos < "/proc/$1/fdinfo/1"; } 2> /dev/null
  case $pos in '' | *[!0-9]*) return 0 ;; esac
  if [ "$pos" -lt "$log_max" ] || [ "$pos" = "$rotated" ]; then return 0; fi
  n=$log_keep
  while [ "$n" -gt 1 ]; do
    mv -f "$2.$((n - 1))" "$2.$n" 2> /dev/null
    n=$((n - 1))
  done
  (set -C && cat "/proc/$1/fd/1" > "$2.1") 2> /dev/null
  { : > "/proc/$1/fd/1"; } 2> /dev/null
  # Read after the emptying: a line written since the copy moved the offset
  # on, and taken for a full log again, the empty log would be copied over
  # the last full generation.
  { read -r _ rotated < "/proc/$1/fdinfo/1"; } 2> /dev/null
}
agent_rotated=
own_rotated=

# The start claims the PID file for this process right after starting it.
waited=0
until claimed; do
  waited=$((waited + 1))
  [ "$waited" -le 60 ] || exit 0
  pause
done

while :; do
  pid=
  read -r pid 2> /dev/null < "$pid_file"
  case $pid in '' | *[!0-9]*) pid= ;; esac
  if [ -n "$pid" ] && alive "$pid"; then
    started=$born
    log "watching AgentAPI (PID $pid)$note"
    # A launch counts as a change: Goose may answer the task prompt first.
    dirty=1
    while [ -d "$dir" ] && alive "$pid" && [ "$born" = "$started" ]; do
      if [ -n "$db" ]; then autosave; fi
      bound_log "$pid" "$agent_log" "$agent_rotated"
      agent_rotated=$rotated
      bound_log $$ "$own_log" "$own_rotated"
      own_rotated=$rotated
      pause
    done
    if ! [ -d "$dir" ]; then
      log "stood down: the module's folder is gone, so the module was removed"
      exit 0
    fi
  fi
  restart "$pid"
done

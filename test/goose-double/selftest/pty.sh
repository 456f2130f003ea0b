# shellcheck shell=bash
# Self-test part 2: the double in a PTY, as AgentAPI drives it.
# Sourced by test/goose-double/selftest.sh, in order, after its helpers (ok, check, g, q, events...);
# each part may use what an earlier one left (the same HOME, session names). Do not execute it.

# ---- 4. PTY behaviour (AgentAPI keystrokes, signals, ^C, /exit, steering) ----------------------
fresh_home pty
# ptyrun ARGS_JSON SCRIPT_JSON: the double in a PTY, driven by a script of steps (ptydrive.py says which).
ptyrun() { EV="$EV" LIMIT="$LIMIT" python3 "$HERE/selftest/ptydrive.py" "$G" "${CWD:-$H/proj}" "$H/home" "$1" "$2"; }
EXIT_AT_PROMPT='[["screen","Enter to send"],["w","/exit\r"],["exit"]]'
last() { tail -1 <<<"$out"; }              # the driver's EXIT= line
shown() { has_all "$out" "$@" && echo y; } # shown NEEDLE... : y when all are on the screen
# Typing during the -t turn is dropped, so wait for the prompt after its reply.
out="$(ptyrun '["run","-s","-n","p1","-t","task"]' '[["screen","Goose double reply #1"],["screen","Enter to send"],["w","x\b"],["w","\u001b[200~"],["w","hello\nworld"],["w","\u001b[201~"],["screen","world"],["w","\r"],["screen","reply #2: received"],["screen","Enter to send"],["sig",2],["event","sigint_ignored"],["w","still here"],["screen","still here"]]')" || true
check "pty: dim placeholder after '> '" has "$out" $'> \e[2mEnter to send · Ctrl+J newline · Shift+Tab reasoning (off)\e[0m'
check "pty: echoed paste" has "$out" 'hello'
check "pty: turn spinner line" grep -qE '[◐◓◑◒]  [A-Z][a-z ]+\.\.\.  \(Ctrl\+C to interrupt\)' <<<"$out"
check "pty: steer input line during a turn" has "$out" '>   [Enter steer · Tab queue · Ctrl+C stop]'
check "pty: reply to paste (newline kept as one input)" has "$out" 'reply #2: received 11 chars: hello world'
check "pty: SIGINT at the idle prompt is ignored" test "$(last):$(events sigint_ignored | wc -l)" = "EXIT=running:1"
# A turn that is cancelled anyway can be long: the SIGINT is certain to find it running.
out="$(TURN=600000 ptyrun '["session","-r","-n","p1"]' '[["screen","Enter to send"],["w","x\b\u001b[200~long one\u001b[201~"],["screen","long one"],["w","\r"],["screen","(Ctrl+C to interrupt)"],["sig",2],["screen","Interrupted, what should goose work on instead?"],["w","\u0003"],["screen","Press Ctrl+C again to exit"],["w","still here"],["screen","still here"]]')" || true
check "pty: SIGINT during a turn cancels it, Goose keeps running" has_all "$out" "Yes — what would you like me to do?" "Interrupted, what should goose work on instead?"
check "pty: first ^C at the prompt prints the hint and keeps running" test "$(shown 'Press Ctrl+C again to exit, or type new instructions to continue'):$(last)" = "y:EXIT=running"
check "pty: cancelled turn keeps its 2 user rows, no reply" test "$(q "SELECT group_concat(role) FROM (SELECT role FROM messages ORDER BY id DESC LIMIT 3)")" = "user,user,assistant"
check "pty: turn_cancelled event" test "$(events turn_cancelled | field reason)" = '"sigint"'
# The "third" turn has to end by itself, after the steer typed as soon as its spinner shows:
# 3 s leave the steer ample time to arrive on a busy machine.
out="$(TURN=3000 ptyrun '["session","-r","-n","p1"]' '[["screen","Enter to send"],["w","second\r"],["screen","(Ctrl+C to interrupt)"],["w","\u0003"],["screen","Interrupted, what should goose work on instead?"],["w","third\r"],["screen","(Ctrl+C to interrupt)"],["w","\u001b[200~steer me\u001b[201~"],["w","\r"],["screen","Goose double reply #6"],["screen","Enter to send"],["w","\u0003"],["screen","Press Ctrl+C again to exit"],["w","\u0003"],["exit"]]')" || true
check "pty: ^C byte during a turn cancels it" test "$(events turn_cancelled | tail -1 | field reason)" = '"ctrl_c"'
check "pty: unanswered messages merged; steer joins the running turn" has "$out" 'Goose double reply #6: received 30 chars: long one second third steer me'
check "pty: model_request carries the merged text" test "$(events model_request | tail -1 | field text)" = '"long one\nsecond\nthird\nsteer me"'
check "pty: steer row (visible, steer flag) + its turn-context row" test "$(q "SELECT group_concat(metadata_json, ' ') FROM (SELECT metadata_json FROM messages ORDER BY id DESC LIMIT 3 OFFSET 1)")" = '{"userVisible":false,"agentVisible":true,"turnContext":true} {"userVisible":true,"agentVisible":true,"steer":true} {"userVisible":false,"agentVisible":true,"turnContext":true}'
check "pty: steering did not start a second turn" test "$(events assistant_message | wc -l):$(events user_message | tail -1 | field source)" = '3:"steer"'
check "pty: second consecutive ^C exits 0" test "$(last):$(events exit | tail -1 | field reason)" = 'EXIT=0:"ctrl_c"'
sid="$(q "SELECT id FROM sessions WHERE name='p1'")"
out="$(ptyrun '["session","-r","-n","p1"]' '[["screen","Enter to send"],["w","/exit"],["w","\r"],["exit"]]')" || true
check "pty: /exit + Enter prints 'session closed' and exits 0" test "$(shown "● session closed · $sid"):$(last)" = "y:EXIT=0"
check "pty: resuming does not continue an unanswered turn" test "$(events model_request | wc -l)" = 6
out="$(ptyrun '["session","-r","-n","p1"]' '[["screen","Enter to send"],["sig",15],["exit"]]')" || true
check "pty: SIGTERM kills (no handler)" has "$out" 'EXIT=-15'
out="$(ptyrun '["session","-r","-n","p1"]' '[["screen","Enter to send"],["sig",1],["exit"]]')" || true
check "pty: SIGHUP kills (no handler)" has "$out" 'EXIT=-1'
mkdir -p "$H/other"; ln -s "$H/proj" "$H/link"
out="$(CWD="$H/link" ptyrun '["session","-r","-n","p1"]' "$EXIT_AT_PROMPT")" || true
check "pty: resume from a symlink to the same folder: no question" test "$(shown 'original working directory'):$(last)" = ":EXIT=0"
q "UPDATE sessions SET working_dir = '$H/link' WHERE id = '$sid'"
out="$(ptyrun '["session","-r","-n","p1"]' "$EXIT_AT_PROMPT")" || true
check "pty: stored dir is a symlink to the cwd: resolved paths match, no question" test "$(shown 'original working directory'):$(last)" = ":EXIT=0"
q "UPDATE sessions SET working_dir = '$H/proj' WHERE id = '$sid'"
out="$(CWD="$H/other" ptyrun '["session","-r","-n","p1"]' '[["screen","│  ● Yes / ○ No"],["sig",15],["exit"]]')" || true
check "pty: working-dir toggle blocks" test "$(shown "◆  WARNING: The original working directory of this session was set to" "│  ● Yes / ○ No"):$(shown 'goose is ready')" = "y:"
out="$(CWD="$H/other" ptyrun '["session","-r","-n","p1"]' '[["screen","│  ● Yes / ○ No"],["raw"],["w","\r"],["screen","Enter to send"],["w","/exit\r"],["exit"]]')" || true
check "pty: working-dir toggle, Enter = Yes switches back" has "$out" "   \\____)    $sid · $H/proj"
out="$(TEL='unset' ptyrun '["session","-n","tel"]' '[["screen","│  ● Yes / ○ No"],["sig",15],["exit"]]')" || true
check "pty: telemetry toggle blocks" test "$(shown "◆  Share anonymous usage data to help improve goose?" "│  ● Yes / ○ No"):$(shown 'goose is ready')" = "y:"
rm -f "$H/home/.config/goose/config.yaml"
out="$(TEL='unset' ptyrun '["session","-n","tel"]' '[["screen","│  ● Yes / ○ No"],["raw"],["w","\r"],["screen","Enter to send"],["w","/exit\r"],["exit"]]')" || true
check "pty: telemetry Enter = Yes, recorded in config.yaml" test "$(shown 'goose is ready'):$(cat "$H/home/.config/goose/config.yaml")" = "y:GOOSE_TELEMETRY_ENABLED: true"
rm -f "$H/home/.config/goose/config.yaml"
out="$(TEL='unset' TELOFF=1 ptyrun '["session","-n","tel"]' "$EXIT_AT_PROMPT")" || true
check "pty: GOOSE_TELEMETRY_OFF=1 removes the question" test "$(shown 'Share anonymous'):$(last)" = ":EXIT=0"
out="$(cd "$H/proj" && env -i PATH="$PATH" HOME="$H/home2" GOOSE_PROVIDER=p GOOSE_MODEL=m timeout 3 "$G" session -n t </dev/null 2>&1)" && rc=0 || rc=$?
check "telemetry toggle, stdin at EOF -> exit 1, no DB" bash -c "[[ $rc == 1 ]] && grep -q 'Share anonymous usage data' <<<\"\$1\" && [[ ! -e '$H/home2/.local/share/goose/sessions/sessions.db' ]]" _ "$out"

fresh_home resumetext
# A long turn, interrupted once it runs: its user rows are stored when it starts.
printf 'first task' | TURN=600000 g run -n rt -i - >/dev/null 2>&1 &
user_rows_stored() { [[ "$(q "SELECT COUNT(*) FROM messages" 2>/dev/null)" == 2 ]]; }
wait_for user_rows_stored || true
kill -INT "$(events start | tail -1 | field pid)"; wait || true
check "headless turn cancelled by SIGINT leaves the user rows" test "$(q "SELECT group_concat(role) FROM messages")" = "user,user"
out="$(g run -r -n rt -s -t "more text" </dev/null)"
check "run -r -n X -s -t: reply covers the unanswered messages too" has "$out" 'Goose double reply #2: received 20 chars: first task more text'
check "... then stays interactive" has "$out" '● session closed ·'
check "... the text is a new user turn (2 rows) + reply" test "$(q "SELECT group_concat(role) FROM messages")" = "user,user,user,user,assistant"
printf 'via file' >"$H/more.md"
out="$(g run -rsn rt -i "$H/more.md" </dev/null)"
check "run -rsn X -i FILE" has "$out" 'Goose double reply #3: received 8 chars: via file'

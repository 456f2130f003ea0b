# shellcheck shell=bash
# Self-test part 1: the double's CLI, database, export and model request.
# Sourced by test/goose-double/selftest.sh, in order, after its helpers (ok, check, g, q, events...);
# each part may use what an earlier one left (the same HOME, session names). Do not execute it.

# ---- 1. CLI surface, database, errors and their streams ---------------------------------
fresh_home cli
check "--version prints ' 1.47.0'" test "$(g --version)" = " 1.47.0"
check "GOOSE_DOUBLE_VERSION" test "$(GOOSE_DOUBLE_VERSION=1.20.0 "$G" --version)" = " 1.20.0"
check "info shows Sessions DB" bash -c "'$G' info | grep -q 'Sessions DB (sqlite): .*/sessions/sessions.db'"
check "session list on empty HOME" test "$(g session list)" = "No sessions found"
check "session list json on empty HOME" test "$(g session list --format json)" = "[]"
check "DB created by session list, with -wal and -shm" test -f "$DB" -a -f "$DB-wal" -a -f "$DB-shm"
check "data dirs 0755, sessions.db 0644 (umask 022)" test "$(umask 022; stat -c %a "$(dirname "$DB")" "$DB" | tr '\n' ' ')" = "755 644 "
check "journal_mode WAL" test "$(q 'PRAGMA journal_mode')" = wal
check "schema_version 16 (default version 1.47.0)" test "$(q 'SELECT group_concat(version) FROM schema_version')" = 16
check "sessions columns" test "$(q "SELECT COUNT(*) FROM pragma_table_info('sessions')")" = 29
check "indexes (v16: 8)" test "$(q "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name LIKE 'idx_%'")" = 8

check "run -s without input: exit 1 + message" test "$(run_g run -s -n x)" = "1:Error: Must provide either --instructions (-i), --text (-t), or --recipe. Use -i - for stdin."
check "--session-id without -r" test "$(run_g run --session-id abc -t hi)" = "1:Error: --session-id can only be used with --resume flag"
check "resume missing name: stderr, exit 1" test "$(streams session --resume --name NOPE)" = "1||Error: No session found with name 'NOPE'"
check "resume missing id: exact text on STDOUT, exit 1" test "$(streams session --resume --session-id NOPE)" = "1|$(bytes '\n  error: Cannot resume session NOPE - no such session exists\n\n')|"
check "run -r missing name" test "$(run_g run -r -s -n nope -t hi)" = "1:Error: No session found with name 'nope'"
check "resume with no sessions" test "$(run_g session -r)" = "1:Error: No session found to resume"
for what in provider model; do # an empty GOOSE_PROVIDER, then GOOSE_MODEL
  if [[ $what == provider ]]; then out="$(P='' streams session -n noprov)"; else out="$(M='' streams session -n nomodel)"; fi
  check "no $what: exact text on STDOUT, exit 1" test "$out" = "1|$(bytes "\n  error: No $what configured. Run 'goose configure' first.\n\n")|"
done
check "failed starts still created their sessions (0 messages)" test "$(q "SELECT group_concat(name) FROM (SELECT name FROM sessions ORDER BY id)")" = "noprov,nomodel"
json="$(g session list --format json)"
check "list json is one line" test "$(wc -l <<<"$json")" = 1
check "list json key order" test "$(python3 -c 'import json,sys; print(",".join(json.loads(sys.argv[1])[0].keys()))' "$json")" = "id,working_dir,name,user_set_name,session_type,created_at,updated_at,extension_data,usage,accumulated_usage,accumulated_cost,schedule_id,recipe,user_recipe_values,conversation,message_count,last_message_at,provider_name,model_config,goose_mode,archived_at,project_id,parent_session_id,last_message_snippet"
check "list json: never-run sessions have model_config null, 0 messages, RFC 3339 times" python3 -c '
import json,re,sys
for s in json.loads(sys.argv[1]):
    assert s["model_config"] is None and s["message_count"] == 0 and s["conversation"] is None, s
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s["created_at"]) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s["updated_at"])' "$json"

fresh_home v15
VER=1.46.1 g run -n s15 -t "hello 15" >/dev/null
schema() { echo "$(q 'SELECT group_concat(version) FROM schema_version'):$(q "SELECT COUNT(*) FROM sqlite_master WHERE name='idx_messages_session_created'")"; }
check "GOOSE_DOUBLE_VERSION=1.46.1 writes schema 15 (no v16 index)" test "$(schema)" = "15:0"
g session list -f json >/dev/null
check "a 1.47 double migrates 15 -> 16 by adding the index" test "$(schema)" = "15,16:1"

# ---- 2. cold start, follow-up, rows, warm start, names (piped stdin) ------------------------
fresh_home cold
printf 'Do the task.\nLine two.' >"$H/task.md"
out="$(printf 'follow up\n' | g run -s -n t1 -i "$H/task.md")" && rc=0 || rc=$?
check "cold start exit 0" test "$rc" = 0
check "cold start reply" has "$out" 'Goose double reply #1: received 22 chars: Do the task. Line two.'
check "task text not echoed on screen" test "$(grep -c 'Do the task' <<<"$out")" = 1
check "follow-up reply" has "$out" 'Goose double reply #2: received 9 chars: follow up'
check "banner: new session line" has "$out" '    __( O)>  ● new session · openai m'
check "banner: id and resolved dir" grep -qE '^   \\____\)    [0-9]{8}_1 · '"$H/proj"'$' <<<"$out"
check "banner: goose is ready" has "$out" '     L L     goose is ready'
check "context bar" grep -qE '^  ╌{20} 0% [0-9]+/128k$' <<<"$out"
check "⏱ line after an interactive reply" grep -qE '^  ⏱ 0\.[0-9]{2}s$' <<<"$out"
check "session closed on EOF" has "$out" "● session closed · $(q 'SELECT id FROM sessions')"
check "session row" test "$(q "SELECT name||'|'||user_set_name||'|'||session_type||'|'||provider_name FROM sessions")" = "t1|1|user|openai"
check "two user rows per turn + replies" test "$(q "SELECT group_concat(role) FROM (SELECT role FROM messages ORDER BY id)")" = "user,user,assistant,user,user,assistant"
check "content_json shape" test "$(q "SELECT content_json FROM messages ORDER BY id LIMIT 1")" = '[{"type":"text","text":"Do the task.\nLine two."}]'
check "visible row metadata" test "$(q "SELECT metadata_json FROM messages ORDER BY id LIMIT 1")" = '{"userVisible":true,"agentVisible":true}'
check "hidden turn-context row" test "$(q "SELECT metadata_json||'|'||(json_extract(content_json,'\$[0].text') LIKE '<turn-context>%</turn-context>') FROM messages ORDER BY id LIMIT 1 OFFSET 1")" = '{"userVisible":false,"agentVisible":true,"turnContext":true}|1'
check "turn-context names the working dir" test "$(q "SELECT instr(content_json, '<working-directory>$H/proj</working-directory>') > 0 FROM messages ORDER BY id LIMIT 1 OFFSET 1")" = 1
check "model_config stored once a model ran" test "$(q "SELECT json_extract(model_config_json,'\$.model_name') FROM sessions")" = m
first_listed() { python3 -c "import json,sys; print(${2-}(json.load(sys.stdin)[0]$1))"; } # first_listed SUBSCRIPT [FN] : FN(first session of a list json on stdin, SUBSCRIPT)
check "list message_count counts user-visible only" test "$(g session list -f json | first_listed '["message_count"]')" = 4
check "extension_data enabled_extensions.v0" test "$(g session list -f json | first_listed '["extension_data"]' list)" = "['enabled_extensions.v0']"
printf 'again\n' | g session -r -n t1 >"$H/out"
check "warm start banner says resuming" grep -qF '    __( O)>  ● resuming · openai m' "$H/out"
check "warm start adds a turn" test "$(q "SELECT COUNT(*) FROM messages WHERE role='user' AND json_extract(metadata_json,'\$.userVisible')")" = 3
check "resume without --history shows no history" bash -c "! grep -q 'restored' '$H/out'"
g session -r -n t1 --history </dev/null >"$H/out"
check "--history: after the banner, messages run together, then one line break" python3 -c '
import re, sys
out = open(sys.argv[1], encoding="utf-8").read()
sys.exit(not re.search(r"goose is ready\n\n  ↻ 6 messages restored\nDo the task\.\nLine two\.Goose double reply #1: [^\n]*"
                       r"againGoose double reply #3: received 5 chars: again\n  ╌", out))' "$H/out"
check "run has no --history" test "$(run_g run -r -n t1 --history -t x | head -1)" = "2:error: unexpected argument '--history' found"
printf 'Invalid API key' >"$H/resume-error"
out="$(RESUME_ERROR="$H/resume-error" streams session -r -n t1)"
check "GOOSE_DOUBLE_RESUME_ERROR_FILE: the file's text on STDOUT, exit 1, nothing stored" test "$out|$(q "SELECT COUNT(*) FROM messages")" = "1|$(bytes '\n  error: Invalid API key\n\n')||9"
sid1="$(q "SELECT id FROM sessions")"
NEWEST_MSG_SID="SELECT session_id FROM messages ORDER BY id DESC LIMIT 1"
g session -n t1 </dev/null >/dev/null
check "'session --name X' when X exists: another session X, 0 messages" test "$(q "SELECT COUNT(*) FROM sessions WHERE name='t1'"):$(q "SELECT COUNT(*) FROM messages WHERE session_id=(SELECT id FROM sessions ORDER BY rowid DESC LIMIT 1)")" = "2:0"
sid2="$(q "SELECT id FROM sessions ORDER BY rowid DESC LIMIT 1")"
printf 'x\n' | g session -r -n t1 >/dev/null
check "resume -n X: the newer empty X wins (updated_at, then id)" test "$(q "$NEWEST_MSG_SID")" = "$sid2"
# Messages carry whole seconds: move the stored ones a minute back, so the next one is the
# newest for certain instead of waiting for the clock to tick.
q "UPDATE messages SET created_timestamp = created_timestamp - 60"
printf 'y\n' | g session -r -n "$sid1" >/dev/null
check "resume by exact id" test "$(q "$NEWEST_MSG_SID")" = "$sid1"
printf 'z\n' | g session -r -n t1 >/dev/null
check "resume -n X picks the most recently active (by last message)" test "$(q "$NEWEST_MSG_SID")" = "$sid1"
check "event log: user_message only for visible messages" test "$(events user_message | wc -l)" = 6
check "event log: sources" test "$(events user_message | field source | tr '\n' ' ')" = '"instructions" "interactive" "interactive" "interactive" "interactive" "interactive" '
check "event log: model_request per turn" test "$(events model_request | wc -l)" = 6
check "-i - reads stdin" bash -c "printf 'from stdin' | (cd '$H/proj' && HOME='$H/home' GOOSE_PROVIDER=p GOOSE_MODEL=m GOOSE_DOUBLE_TURN_MS=0 '$G' run -i - ) | grep -q 'received 10 chars: from stdin'"

# ---- 3. export (commands/session.rs handle_session_export @ v1.46.1) -------------------------
exp="$(g session export --name t1 --format json)"
check "export json: Session keys + conversation array" python3 -c '
import json,sys
s = json.loads(sys.argv[1]); conv = s["conversation"]
assert list(s)[:3] == ["id","working_dir","name"] and list(s)[-1] == "last_message_snippet", list(s)
assert isinstance(conv, list) and len(conv) == 15, len(conv)
assert [list(m) for m in conv] == [["id","role","created","content","metadata"]] * len(conv)
assert conv[0]["content"] == [{"type":"text","text":"Do the task.\nLine two."}] and conv[0]["role"] == "user"
assert conv[1]["metadata"] == {"userVisible":False,"agentVisible":True,"turnContext":True}
assert conv[2]["role"] == "assistant" and conv[2]["id"].startswith("msg_")
assert s["message_count"] == 10 and isinstance(conv[0]["created"], int)' "$exp"
check "export json is pretty-printed (2 spaces)" test "$(sed -n 2p <<<"$exp")" = "  \"id\": \"$sid1\","
g session export --session-id "$sid1" --format json -o "$H/exp.json" >"$H/out"
check "export -o FILE" test "$(cat "$H/out")|$(cat "$H/exp.json")" = "Session exported to $H/exp.json|$exp"
check "export missing name" test "$(streams session export --name NOPE --format json)" = "1||Error: No session found with name 'NOPE'"
check "export missing id" test "$(streams session export --session-id NOPE --format json)" = "1||Error: Session 'NOPE' not found or failed to read: Session not found"
check "export markdown (default format)" test "$(g session export -n t1 | head -3 | tr '\n' '|')" = "# Session Export: t1||*Total messages: 10*|"

# ---- 3b. the model request, when the provider's host is set (see README) -----------------------
fresh_home layers
mkdir -p "$H/home/.config/goose"
printf 'extensions:\n  developer:\n    enabled: false\n  memory:\n    type: builtin\n    enabled: true\n' >"$H/home/.config/goose/config.yaml"
printf '{"extensions":{"developer":{"type":"builtin","name":"developer","enabled":true},"tutorial":{"type":"builtin","name":"tutorial","enabled":true}}}' >"$H/layer.json"
LAYERS="$H/layer.json" g session -n layered </dev/null >/dev/null
check "config layers: the extra file's entries, merged field by field, the user's file last" \
  test "$(q "SELECT extension_data FROM sessions WHERE name='layered'" | python3 -c 'import json,sys; print(",".join(e["name"] for e in json.load(sys.stdin)["enabled_extensions.v0"]["extensions"]))')" = "tutorial,memory"

fresh_home model
MODEL_LOG="$H/model-requests.txt"
# A provider on loopback: 401 unless the key is "good", else one streamed OpenAI answer.
python3 "$HERE/selftest/model_server.py" "$MODEL_LOG" "$H/port" &
MODEL_PID=$!
wait_for test -s "$H/port"
gm() { # gm KEY ARGS... : the double with the openai provider pointed at that server
  local key="$1"; shift
  (cd "$H/proj" && env -i PATH="$PATH" HOME="$H/home" GOOSE_DOUBLE_EVENT_LOG="$EV" GOOSE_PROVIDER=openai \
    GOOSE_MODEL=m GOOSE_TELEMETRY_ENABLED=false GOOSE_DOUBLE_TURN_MS=0 \
    OPENAI_HOST="http://127.0.0.1:$(cat "$H/port")/api/v2/aibridge/openai" OPENAI_API_KEY="$key" "$G" "$@")
}
out="$(gm good run -n m1 -t "hello model" 2>&1)"
check "model: the reply is the model's text" has "$out" "model says hi"
check "model: POST to the host's path + v1/chat/completions, bearer key, streamed" \
  test "$(head -n1 "$MODEL_LOG")" = "/api/v2/aibridge/openai/v1/chat/completions Bearer good True"
check "model: the reply is stored" test "$(q "SELECT content_json LIKE '%model says hi%' FROM messages WHERE role='assistant'")" = 1
out="$(gm wrong run -n m2 -t "hello again" 2>&1)"
check "model: a refused request fails the turn as Goose shows it" has_all "$out" \
  "Ran into this error: Authentication error: Authentication failed for http://127.0.0.1:" \
  "Status: 401 Unauthorized. Response: Invalid session token." "Please retry if you think this is a transient"
check "model: nothing stored for the failed turn" \
  test "$(q "SELECT COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id WHERE s.name = 'm2' AND m.role = 'assistant'")" = 0
kill "$MODEL_PID"

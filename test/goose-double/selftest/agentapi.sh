# shellcheck shell=bash
# Self-test part 3: the double end to end under AgentAPI.
# Sourced by test/goose-double/selftest.sh, in order, after its helpers (ok, check, g, q, events...);
# each part may use what an earlier one left (the same HOME, session names). Do not execute it.

# ---- 5. AgentAPI end to end ------------------------------------------------------------------
AA="${AGENTAPI_BIN:-}"
if [[ -z "$AA" ]]; then
  for c in "$REPO"/.tools/agentapi/v0.12.*/agentapi "$REPO"/.tools/agentapi/*/agentapi; do
    [[ -x "$c" ]] && { AA="$c"; break; }
  done
fi
if [[ -n "$AA" && -x "$AA" ]]; then
  fresh_home e2e
  printf 'Build the thing.\nSecond line.' >"$H/task.md"
  res="$(timeout 180 python3 "$HERE/selftest/agentapi_e2e.py" "$AA" "$G" "$H")" || res='{}'
  echo "agentapi: $("$AA" --version 2>/dev/null) -> $res"
  jq_() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(r.get(sys.argv[2]))" "$res" "$1"; }
  check "e2e: stable after cold start" test "$(jq_ stable1)" = True
  check "e2e: POST /message ok" test "$(jq_ post)" = 200
  check "e2e: stable after turn" test "$(jq_ stable2)" = True
  check "e2e: roles agent,user,agent" test "$(jq_ roles)" = "['agent', 'user', 'agent']"
  check "e2e: user message" test "$(jq_ user)" = "hello there"
  # 0.12 strips the context bar below the reply; 0.11.8 keeps it in the message
  check "e2e: reply text with its ⏱ line" grep -qE '^Goose double reply #2: received 11 chars: hello there ⏱ 0\.[0-9]{2}s( ╌{20} 0% [0-9]+/128k)?$' <<<"$(jq_ reply)"
  check "e2e: first message: banner and task reply" grep -q '● new session · openai m .* goose is ready Goose double reply #1: received 29 chars' <<<"$(jq_ first)"
  # A lower bound only: a Goose that died of the SIGINT would let AgentAPI exit at once; a stop
  # that hangs is caught by the exit status check ("killed").
  check "e2e: SIGTERM at idle: Goose ignores SIGINT, AgentAPI SIGKILLs it after its 5 s" python3 -c "import sys; sys.exit(not 4.5 <= float(sys.argv[1]))" "$(jq_ stop_s)"
  # agentapi < 0.12 exits 1 after SIGKILLing its child; 0.12 exits 0 (README.md, "Under AgentAPI")
  if "$AA" --version 2>/dev/null | grep -q 'version 0\.1[2-9]'; then
    check "e2e: agentapi exit 0 on SIGTERM" test "$(jq_ rc1)" = 0
  else
    check "e2e: agentapi (<0.12) exit 1 on SIGTERM" test "$(jq_ rc1)" = 1
  fi
  check "e2e: warm restart reply" grep -q '^Goose double reply #3: received 8 chars: continue ⏱' <<<"$(jq_ reply2)"
  check "e2e: raw '/exit\\r' at idle: AgentAPI exits 0 by itself" test "$(jq_ rc2)" = 0
  check "e2e: task prompt stored exactly once" test "$(q "SELECT COUNT(*) FROM messages WHERE role='user' AND content_json LIKE '%Build the thing.%'")" = 1
  check "e2e: event log user messages" test "$(grep -c '"user_message"' "$H/events.jsonl")" = 3
  check "e2e: first Goose SIGKILLed (no exit event), second exited 0 via /exit" test "$(grep '"event": "exit"' "$H/events.jsonl" | field reason | tr '\n' ' ')" = '"/exit" '
else
  echo "skip AgentAPI end-to-end (no agentapi binary; set AGENTAPI_BIN)"
fi

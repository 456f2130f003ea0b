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
  cat >"$WORK/e2e.py" <<'EOF'
import json, os, signal, socket, subprocess, sys, time, urllib.request, urllib.error
AA, G, H = sys.argv[1], sys.argv[2], sys.argv[3]
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
def call(p, path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (p, path), method="POST" if body else "GET",
                                 data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r: return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e: return e.code, e.read().decode()
def stable(p, t=30):
    end = time.time() + t
    while time.time() < end:
        try:
            if call(p, "/status")[1]["status"] == "stable": return True
        except Exception: pass
        time.sleep(0.1)
    return False
def start(goose_args):
    p = port()
    env = dict(os.environ, HOME=H + "/home", GOOSE_PROVIDER="openai", GOOSE_MODEL="m",
               GOOSE_TELEMETRY_ENABLED="false", GOOSE_DOUBLE_EVENT_LOG=H + "/events.jsonl")
    proc = subprocess.Popen([AA, "server", "--type", "goose", "--port", str(p), "--", G, *goose_args],
                            cwd=H + "/proj", env=env, stdin=subprocess.DEVNULL,
                            stdout=open(H + "/aa.log", "a"), stderr=subprocess.STDOUT)
    return p, proc
def wait(proc, t=20):
    try: return proc.wait(t)
    except subprocess.TimeoutExpired: proc.kill(); proc.wait(); return "killed"
res = {}
p, proc = start(["run", "-s", "-n", "t1", "-i", H + "/task.md"])
try:
    res["stable1"] = stable(p)
    res["post"] = call(p, "/message", {"content": "hello there", "type": "user"})[0]
    res["stable2"] = stable(p)
    msgs = call(p, "/messages")[1]["messages"]
    res["roles"] = [m["role"] for m in msgs]
    res["user"] = msgs[-2]["content"] if len(msgs) >= 2 else None
    res["reply"] = " ".join(msgs[-1]["content"].split()) if msgs else None
    res["first"] = " ".join(msgs[0]["content"].split()) if msgs else None
finally:
    t = time.time(); proc.send_signal(signal.SIGTERM); res["rc1"] = wait(proc); res["stop_s"] = round(time.time() - t, 2)
# warm restart: resume by name, no new task text; leave with a raw /exit
p, proc = start(["session", "-r", "-n", "t1"])
try:
    res["stable3"] = stable(p)
    res["post2"] = call(p, "/message", {"content": "continue", "type": "user"})[0]
    res["stable4"] = stable(p)
    msgs = call(p, "/messages")[1]["messages"]
    res["reply2"] = " ".join(msgs[-1]["content"].split()) if msgs else None
    t = time.time()
    res["raw"] = call(p, "/message", {"content": "/exit\r", "type": "raw"})[0]
    res["rc2"] = wait(proc); res["exit_s"] = round(time.time() - t, 2)
finally:
    if proc.poll() is None: proc.kill(); proc.wait()
print(json.dumps(res))
EOF
  res="$(timeout 180 python3 "$WORK/e2e.py" "$AA" "$G" "$H")" || res='{}'
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

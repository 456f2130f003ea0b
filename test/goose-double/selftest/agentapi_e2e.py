"""The Goose double end to end under AgentAPI (agentapi.sh): a cold start with a task, a message,
a stop by SIGTERM, then a warm restart left with a raw /exit. Prints the readings as one JSON object.

Usage: agentapi_e2e.py AGENTAPI GOOSE HOME_ROOT
"""
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

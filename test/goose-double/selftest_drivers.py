"""Drivers for selftest.py: a model provider on loopback, the double in a PTY, AgentAPI end to end.
Each wait polls for its condition and gives up after `limit` seconds."""
import http.server, json, os, pty, select, signal, socket, subprocess, sys, termios, threading, time
import urllib.error, urllib.request


def wait_for(cond, what, limit):  # poll until cond() holds; False after limit seconds
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            sys.stderr.write("timed out after %g s waiting for %s\n" % (limit, what))
            return False
        time.sleep(0.05)
    return True


def otlp_receiver(log):
    """An OTLP/HTTP receiver on loopback that answers 200 to every export. Appends
    (PATH, HEADERS, BODY) of each request to log. Returns the running server."""
    class Receiver(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            log.append((self.path, dict(self.headers), self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    server.thread = threading.Thread(target=server.serve_forever, daemon=True)
    server.thread.start()
    return server


def model_server(log):
    """A provider on loopback: 401 unless the key is "good", else one streamed OpenAI answer. Appends
    "PATH AUTHORIZATION STREAM" of each request to log. Returns the running server."""
    class Model(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            log.append("%s %s %s" % (self.path, self.headers.get("Authorization"), body["stream"]))
            if self.headers.get("Authorization") != "Bearer good":
                data = json.dumps({"error": {"message": "Invalid session token."}}).encode()
                self.send_response(401)
            else:
                data = b'data: {"choices":[{"delta":{"content":"model says hi"}}]}\n\ndata: [DONE]\n\n'
                self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    server = http.server.HTTPServer(("127.0.0.1", 0), Model)
    server.thread = threading.Thread(target=server.serve_forever, daemon=True)
    server.thread.start()
    return server


def pty_drive(goose, cwd, env, ev, limit, args, script):
    """The double in a PTY, typed into as AgentAPI does, by a script of steps:
      ("w", TEXT)       write TEXT to the terminal
      ("screen", TEXT)  wait until TEXT appears on the terminal after the last text waited for
      ("event", NAME)   wait for the next NAME event in the event log ev (written by this run)
      ("raw",)          wait until the double reads keys in raw mode (a question is drawn before
                        that, and an Enter typed earlier would reach it as a newline)
      ("cooked",)       wait until the terminal is in canonical mode (the tty echoes and buffers
                        typed text, and turns a ^C byte into SIGINT)
      ("sig", N)        send signal N to the double
      ("exit",)         wait for the double to exit
    Returns (terminal output, exit status), the status "running" when the double still runs after
    the last step (then it is killed), "timeout" or "exited early". A script that claims the
    double keeps running ends by typing text and waiting for its echo."""
    st = {"out": b"", "seen": 0, "status": None, "closed": False,
          "ev_pos": os.path.getsize(ev) if os.path.exists(ev) else 0}
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.execve(goose, [goose, *args], env)
        finally:
            os._exit(127)

    def read_some():  # keep reading the terminal (a full one would block the double); note when it closes
        if st["closed"]:
            return time.sleep(0.05)
        if select.select([fd], [], [], 0.05)[0]:
            try:
                d = os.read(fd, 65536)
            except OSError:  # EIO: the double has exited
                d = b""
            st["out"] += d
            st["closed"] = not d

    def on_screen(text):
        i = st["out"].find(text.encode(), st["seen"])
        if i >= 0:
            st["seen"] = i + len(text.encode())
        return i >= 0

    def next_event(name):
        if not os.path.exists(ev):
            return False
        with open(ev, "rb") as f:
            f.seek(st["ev_pos"])
            for line in f:
                if not line.endswith(b"\n"):
                    break  # a line still being written
                st["ev_pos"] += len(line)
                if json.loads(line).get("event") == name:
                    return True
        return False

    def exited():
        if st["status"] is None:
            w, s = os.waitpid(pid, os.WNOHANG)
            if w:
                st["status"] = os.waitstatus_to_exitcode(s)
        return st["closed"] and st["status"] is not None

    def finish(last):
        if st["status"] is None:
            if last != "exited early":
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
        return st["out"].decode("utf-8", "replace"), str(last)

    for step in script:
        kind = step[0]
        if kind == "w":
            os.write(fd, step[1].encode())
            continue
        if kind == "sig":
            os.kill(pid, step[1])
            continue
        ready, what = {"screen": (lambda: on_screen(step[1]), repr(step[1:])),
                       "event": (lambda: next_event(step[1]), "event " + repr(step[1:])),
                       "raw": (lambda: not termios.tcgetattr(fd)[3] & termios.ICANON, "raw mode"),  # both ends share modes
                       "cooked": (lambda: termios.tcgetattr(fd)[3] & termios.ICANON, "canonical mode"),
                       "exit": (exited, "exit")}[kind]
        end = time.monotonic() + limit
        while not ready():
            if st["closed"] and kind != "exit":
                sys.stderr.write("pty_drive: the double exited while waiting for %s\n" % what)
                return finish("exited early")
            if time.monotonic() > end:
                sys.stderr.write("pty_drive: timed out after %g s waiting for %s\n" % (limit, what))
                return finish("timeout")
            read_some()
    if st["status"] is None:
        w, s = os.waitpid(pid, os.WNOHANG)
        if w:
            st["status"] = os.waitstatus_to_exitcode(s)
        return finish(st["status"] if w else "running")
    return finish(st["status"])


def agentapi_e2e(aa, goose, h, ev):
    """The double under AgentAPI, HOME h/home, in h/proj: a cold start with the task h/task.md, a
    message, a stop by SIGTERM, then a warm restart left with a raw /exit. Returns the readings."""
    def call(port, path, body=None):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method="POST" if body else "GET",
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stable(port):
        def is_stable():
            try:
                return call(port, "/status")[1]["status"] == "stable"
            except Exception:
                return False
        return wait_for(is_stable, "AgentAPI status stable", 30)

    def start(goose_args):
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        env = dict(os.environ, HOME=h + "/home", GOOSE_PROVIDER="openai", GOOSE_MODEL="m",
                   GOOSE_TELEMETRY_ENABLED="false", GOOSE_DOUBLE_EVENT_LOG=ev)
        with open(h + "/aa.log", "a") as log:
            proc = subprocess.Popen([aa, "server", "--type", "goose", "--port", str(port), "--", goose, *goose_args],
                                    cwd=h + "/proj", env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        return port, proc

    def wait(proc):
        try:
            return proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill(); proc.wait(); return "killed"

    res = {}
    port, proc = start(["run", "-s", "-n", "t1", "-i", h + "/task.md"])
    try:
        res["stable1"] = stable(port)
        res["post"] = call(port, "/message", {"content": "hello there", "type": "user"})[0]
        res["stable2"] = stable(port)
        msgs = call(port, "/messages")[1]["messages"]
        res["roles"] = [m["role"] for m in msgs]
        res["user"] = msgs[-2]["content"] if len(msgs) >= 2 else None
        res["reply"] = " ".join(msgs[-1]["content"].split()) if msgs else None
        res["first"] = " ".join(msgs[0]["content"].split()) if msgs else None
    finally:
        t = time.time(); proc.send_signal(signal.SIGTERM); res["rc1"] = wait(proc); res["stop_s"] = round(time.time() - t, 2)
    # warm restart: resume by name, no new task text; leave with a raw /exit
    port, proc = start(["session", "-r", "-n", "t1"])
    try:
        res["stable3"] = stable(port)
        res["post2"] = call(port, "/message", {"content": "continue", "type": "user"})[0]
        res["stable4"] = stable(port)
        msgs = call(port, "/messages")[1]["messages"]
        res["reply2"] = " ".join(msgs[-1]["content"].split()) if msgs else None
        res["raw"] = call(port, "/message", {"content": "/exit\r", "type": "raw"})[0]
        res["rc2"] = wait(proc)
    finally:
        if proc.poll() is None:
            proc.kill(); proc.wait()
    return res

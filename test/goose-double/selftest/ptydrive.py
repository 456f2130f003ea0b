"""PTY driver of the Goose double's self-test (pty.sh): types into the double as AgentAPI does.

Usage: ptydrive.py GOOSE CWD HOME ARGS_JSON SCRIPT_JSON, with LIMIT (seconds) and EV (event log) set.
A script is a list of steps:
  ["w", TEXT]       write TEXT to the terminal
  ["screen", TEXT]  wait until TEXT appears on the terminal after the last text waited for
  ["event", NAME]   wait for the next NAME event in the event log (written by this run)
  ["raw"]           wait until the double reads keys in raw mode (a question is drawn before
                    that, and an Enter typed earlier would reach it as a newline)
  ["sig", N]        send signal N to the double
  ["exit"]          wait for the double to exit
Prints the terminal output and a last line EXIT=<exit status>, or EXIT=running when the double
still runs after the last step (then it is killed), or EXIT=timeout. A script that claims the
double keeps running ends by typing text and waiting for its echo.
"""
import json, os, pty, select, signal, sys, termios, time
G, cwd, home = sys.argv[1], sys.argv[2], sys.argv[3]
args, script = json.loads(sys.argv[4]), json.loads(sys.argv[5])
LIMIT, EV = float(os.environ["LIMIT"]), os.environ["EV"]
ev_pos = os.path.getsize(EV) if os.path.exists(EV) else 0
pid, fd = pty.fork()
if pid == 0:
    os.chdir(cwd)
    env = {"PATH": os.environ["PATH"], "HOME": home, "TERM": "vt100", "GOOSE_PROVIDER": "openai",
           "GOOSE_MODEL": "m", "GOOSE_DOUBLE_TURN_MS": os.environ.get("TURN", "200"),
           "GOOSE_DOUBLE_EVENT_LOG": EV}
    if os.environ.get("TEL", "false") != "unset":
        env["GOOSE_TELEMETRY_ENABLED"] = os.environ.get("TEL", "false")
    if os.environ.get("TELOFF"):
        env["GOOSE_TELEMETRY_OFF"] = os.environ["TELOFF"]
    os.execve(G, [G] + args, env)
out, seen, status, closed = b"", 0, None, False
def finish(last):
    sys.stdout.write(out.decode("utf-8", "replace"))
    print("\nEXIT=%s" % last)
    sys.exit(0)
def read_some():
    """Keep reading the terminal (a full one would block the double); note when it closes."""
    global out, closed
    if closed:
        return time.sleep(0.05)
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        try:
            d = os.read(fd, 65536)
        except OSError:  # EIO: the double has exited
            d = b""
        out += d
        closed = not d
def wait(ready, what):
    end = time.monotonic() + LIMIT
    while not ready():
        if closed and what != "exit":
            sys.stderr.write("ptydrive: the double exited while waiting for %s\n" % what)
            finish("exited early")
        if time.monotonic() > end:
            sys.stderr.write("ptydrive: timed out after %gs waiting for %s\n" % (LIMIT, what))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            finish("timeout")
        read_some()
def on_screen(text):
    global seen
    i = out.find(text.encode(), seen)
    if i >= 0:
        seen = i + len(text.encode())
    return i >= 0
def next_event(name):
    global ev_pos
    with open(EV, "rb") as f:
        f.seek(ev_pos)
        for line in f:
            if not line.endswith(b"\n"):
                break  # a line still being written
            ev_pos += len(line)
            if json.loads(line).get("event") == name:
                return True
    return False
def exited():
    global status
    if status is None:
        w, st = os.waitpid(pid, os.WNOHANG)
        if w:
            status = os.waitstatus_to_exitcode(st)
    return closed and status is not None
for step in script:
    kind = step[0]
    if kind == "w":
        os.write(fd, step[1].encode())
    elif kind == "screen":
        wait(lambda: on_screen(step[1]), repr(step[1]))
    elif kind == "event":
        wait(lambda: os.path.exists(EV) and next_event(step[1]), "event " + step[1])
    elif kind == "raw":  # the pseudo-terminal's two ends share one set of modes
        wait(lambda: not termios.tcgetattr(fd)[3] & termios.ICANON, "raw mode")
    elif kind == "sig":
        os.kill(pid, step[1])
    elif kind == "exit":
        wait(exited, "exit")
if status is None:
    w, st = os.waitpid(pid, os.WNOHANG)
    if w:
        finish(os.waitstatus_to_exitcode(st))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    finish("running")
finish(status)

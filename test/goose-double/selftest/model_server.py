"""A model provider on loopback for cli.sh: 401 unless the key is "good", else one streamed
OpenAI answer. Logs "PATH AUTHORIZATION STREAM" a line to LOG; writes its port to PORT_FILE.

Usage: model_server.py LOG PORT_FILE
"""
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[1], "a") as f:
            f.write("%s %s %s\n" % (self.path, self.headers.get("Authorization"), json.loads(body)["stream"]))
        if self.headers.get("Authorization") != "Bearer good":
            out = json.dumps({"error": {"message": "Invalid session token."}}).encode()
            self.send_response(401)
        else:
            out = b"data: {\"choices\":[{\"delta\":{\"content\":\"model says hi\"}}]}\n\ndata: [DONE]\n\n"
            self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()

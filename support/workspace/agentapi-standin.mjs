// A stand-in for `agentapi server` that leaves the way AgentAPI 0.11.8 can
// when its agent exits on the typed `/exit`: it ends before answering the very
// request that carried `/exit` (runServer in cmd/server/server.go, coder/agentapi
// @ v0.11.8, returns once the HTTP server is told to shut down, without waiting
// for the requests in flight). With real AgentAPI that is a race; here it
// happens every time, so the stop's reading of it can be tested.
//
// Started as `agentapi <this file> server --port <port>` (argv0 set by the
// test), so its command line is the one the stop looks for. It answers what
// the stop asks of an idle Goose: "stable" on /status, a screen ending at
// Goose's empty prompt on /internal/screen, and 200 to any other raw input.
// With STANDIN_LEAVE_ON=ctrl-c the input line holds unsent text, and it is
// the Ctrl+C that clears it that AgentAPI leaves on, unanswered (an AgentAPI
// that goes away at any step of the stop). Each request's method, path and
// body goes to the file named by STANDIN_REQUEST_LOG, one JSON line each.
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";

const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
const requestLog = process.env.STANDIN_REQUEST_LOG;
const leaveOn = process.env.STANDIN_LEAVE_ON === "ctrl-c" ? "\u0003" : "/exit\r";
const SCREEN = `( O)> goose is ready\n\n> ${leaveOn === "/exit\r" ? "Enter to send, Ctrl+J for new line" : "a message typed before the reply"}\n`;

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => {
    body += chunk;
  });
  req.on("end", () => {
    if (requestLog) appendFileSync(requestLog, `${JSON.stringify({ method: req.method, path: req.url, body })}\n`);
    if (req.method === "GET" && req.url === "/status") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(JSON.stringify({ status: "stable", agent_type: "goose" }));
    }
    if (req.method === "GET" && req.url === "/internal/screen") {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      return res.write(`event: screen\ndata: ${JSON.stringify({ screen: SCREEN })}\n\n`);
    }
    if (req.method === "POST" && req.url === "/message" && JSON.parse(body).content === leaveOn) {
      // The agent has gone: the connection closes unanswered, then the process ends.
      req.socket.once("close", () => process.exit(0));
      return req.socket.destroy();
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ ok: true }));
  });
});
server.listen(port, "127.0.0.1", () => process.stdout.write(`listening on ${port}\n`));

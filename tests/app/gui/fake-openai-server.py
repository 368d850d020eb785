#!/usr/bin/env python3
"""A stand-in OpenAI-compatible server for the remote-chat tests (plain python3).

GET /v1/models lists "fake-ok", "fake-malformed", "fake-cut", "fake-500",
"fake-badtype". POST /v1/chat/completions streams by the requested model:
  fake-ok        two content chunks split mid-line across writes, CRLF
                 line ends, a comment line, reasoning_content first, the
                 usage chunk (prompt 11, cached 7, completion 3), [DONE];
                 the content names the roles it received and the body's
                 stream / include_usage / max_tokens, so the test sees what
                 the client sent
  fake-malformed one good chunk ("Hello"), then "data: {not json"
  fake-badtype   one good chunk, then a chunk whose content is a number
  fake-cut       one good chunk, then the connection closes without [DONE]
  fake-500       HTTP 500 with an OpenAI error body
Every request must carry "Authorization: Bearer sekrit", else 401.
Prints "PORT n" once listening.
"""
import json
import socket
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sekrit"
MODELS = ["fake-ok", "fake-malformed", "fake-cut", "fake-500", "fake-badtype"]


def chunk(content=None, reasoning=None, finish=None):
    delta = {}
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta["reasoning_content"] = reasoning
    return {"id": "x", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def sse(obj):
    return ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\r\n\r\n").encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        if self.headers.get("Authorization") == "Bearer " + KEY:
            return True
        self.reply_json(401, {"error": {"message": "Invalid API key", "type": "auth"}})
        return False

    def do_GET(self):
        if not self.authorized():
            return
        if self.path == "/v1/models":
            self.reply_json(200, {"object": "list",
                                  "data": [{"id": m, "object": "model"} for m in MODELS]})
        else:
            self.reply_json(404, {"error": {"message": "no such route"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(n) or b"{}")
        if not self.authorized():
            return
        model = body.get("model")
        if model == "fake-500":
            self.reply_json(500, {"error": {"message": "the GPU caught fire"}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        w = self.wfile
        if model == "fake-ok":
            roles = ",".join(m["role"] for m in body.get("messages", []))
            so = body.get("stream_options") or {}
            text = "roles=%s stream=%s usage=%s max=%s" % (
                roles, body.get("stream"), so.get("include_usage"), body.get("max_tokens"))
            w.write(b": keep-alive\r\n\r\n")
            w.write(sse(chunk(reasoning="thinking")))
            data = sse(chunk(content=text[:10])) + sse(chunk(content=text[10:], finish="stop"))
            for i in range(0, len(data), 7):  # events split across writes
                w.write(data[i:i + 7])
                w.flush()
                time.sleep(0.002)
            w.write(sse({"id": "x", "choices": [], "usage": {
                "prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14,
                "prompt_tokens_details": {"cached_tokens": 7}}}))
            w.write(sse("[DONE]"))
            w.flush()
            return
        w.write(sse(chunk(content="Hello")))
        w.flush()
        time.sleep(0.05)
        if model == "fake-malformed":
            w.write(b"data: {not json\n\n")
            w.write(sse(chunk(content=" never shown")))
        elif model == "fake-badtype":
            w.write(sse({"choices": [{"delta": {"content": 42}}]}))
        elif model == "fake-cut":
            w.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        w.flush()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()

#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub, for model-download tests (no internet).

It answers the way the Hub answers for an LFS file:
  GET /{repo}/resolve/main/{file}
      302 to /cdn/{n} (relative, as a CDN URL would be absolute), with
      X-Linked-Etag: "<sha256>", X-Linked-Size: <bytes>, ETag, X-Repo-Commit.
  GET /cdn/{n}
      the bytes; "Range: bytes=N-" gives 206 with Content-Range, otherwise
      200; Accept-Ranges: bytes; an ETag that is not the SHA-256 (as on the CDN).
Per file, from the JSON config given as argv[1]:
  blob          path of the bytes to serve
  sha256        what X-Linked-Etag publishes (may differ from the bytes: "corrupt")
  status        answer the resolve URL with this HTTP status instead (401, 404)
  throttle      send 64 KiB chunks 20 ms apart (so a test can pause mid-way)
  disconnect_at on the first CDN request only, close the connection once this
                offset of the file has been sent
  stall_at      on the first CDN request only, send up to this offset, then
                nothing more (for 20 s), so a test can pause at a known offset
  ignore_range  answer a range request with 200 and the whole file
Every request is appended to config["log"] as "METHOD PATH RANGE" (RANGE
"-" when absent). Prints "PORT <n>" once listening on 127.0.0.1.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIG = json.load(open(sys.argv[1]))
FILES = CONFIG["files"]
SERVED = set()  # CDN indices already served once (disconnect_at)


def log(line):
    with open(CONFIG["log"], "a") as f:
        f.write(line + "\n")


class Hub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def do_HEAD(self):
        self.handle_any(head=True)

    def do_GET(self):
        self.handle_any(head=False)

    def handle_any(self, head):
        log("%s %s %s" % (self.command, self.path, self.headers.get("Range", "-")))
        if self.path.startswith("/cdn/"):
            return self.cdn(int(self.path[5:]), head)
        for i, f in enumerate(FILES):
            if self.path == "/%s/resolve/main/%s" % (f["repo"], f["file"]):
                return self.resolve(i, f)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def resolve(self, i, f):
        if f.get("status"):
            self.send_response(f["status"])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = len(open(f["blob"], "rb").read())
        self.send_response(302)
        self.send_header("Location", "/cdn/%d" % i)
        self.send_header("X-Linked-Etag", '"%s"' % f["sha256"])
        self.send_header("X-Linked-Size", str(size))
        self.send_header("ETag", 'W/"0123456789abcdef0123456789abcdef01234567"')
        self.send_header("X-Repo-Commit", "0" * 40)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def cdn(self, i, head):
        f = FILES[i]
        data = open(f["blob"], "rb").read()
        start = 0
        rng = self.headers.get("Range")
        if rng and not f.get("ignore_range"):
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"cdn-etag-%d"' % i)
        self.end_headers()
        if head:
            return
        stall = f.get("stall_at", -1)
        if stall >= 0 and i not in SERVED and stall > start:
            SERVED.add(i)
            self.wfile.write(data[start:stall])
            self.wfile.flush()
            time.sleep(20)  # the client pauses meanwhile and closes the connection
            self.close_connection = True
            return
        cut = f.get("disconnect_at", -1)
        if cut >= 0 and i not in SERVED and cut > start:
            SERVED.add(i)
            self.wfile.write(data[start:cut])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)  # mid-transfer: the client sees a short body
            return
        SERVED.add(i)
        pos = start
        step = 64 * 1024
        try:
            while pos < len(data):
                self.wfile.write(data[pos:pos + step])
                self.wfile.flush()
                pos += step
                if f.get("throttle"):
                    time.sleep(0.02)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client paused / cancelled


server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
server.daemon_threads = True
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()

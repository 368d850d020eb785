#!/usr/bin/env python3
"""cache-watch --url against a fake RadixChat server written here.

The fake answers /v1/cache and streams /v1/cache/events in the server's SSE
format: a snapshot (page size 2, a node with a child), an insert, a split,
a malformed JSON message, an event naming an unknown node, a message of an
unknown type, a resync snapshot, then it closes the stream. cache-watch
must count the two bad messages without crashing, apply the rest, follow
the resync, notice the stream ended, and refuse a wrong API key with one
line. Usage: cache-watch-url-test.py RADIXCHAT_CLI
"""
import http.server
import json
import subprocess
import sys
import threading

KEY = "sekrit"


def node(i, parent, tokens):
    return {"id": i, "parent": parent, "tokens": tokens, "token_count": len(tokens)}


def snapshot(seq, nodes, resync=False):
    j = {"type": "snapshot", "policy": "radix", "page_size": 2, "total_pages": 64, "tick": 1,
         "next_seq": seq + 1, "seq": seq, "nodes": [node(0, None, [])] + nodes}
    if resync:
        j["resync"] = True
    return j


def event(kind, seq, n, parent=None, other=None, count=0, tokens=None):
    j = {"type": kind, "seq": seq, "node": n, "parent": parent, "other": other,
         "token_count": count, "page_count": count // 2, "tick": seq}
    if tokens is not None:
        j["tokens"] = tokens
    return j


MESSAGES = [
    json.dumps(snapshot(4, [node(1, 0, [1, 2, 3, 4]), node(2, 1, [5, 6])])),  # 3 blocks
    json.dumps(event("insert", 5, 3, 1, None, 4, [7, 8, 9, 10])),  # +2 blocks
    json.dumps(event("split", 6, 4, 0, 1, 2)),  # regroups, no change
    "{not json",  # malformed
    json.dumps(event("evict", 7, 99, 0, None, 2)),  # unknown node
    json.dumps({"type": "mystery", "seq": 8}),  # unknown kind: ignored
    json.dumps(snapshot(20, [node(1, 0, [1, 2]), node(5, 1, [3, 4, 11, 12])], resync=True)),
]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            body = b'{"error":{"message":"bad key"}}'
            self.send_response(401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.startswith("/v1/cache/events"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for m in MESSAGES:
                self.wfile.write(f"data: {m}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True
            return
        body = json.dumps(snapshot(0, [])).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    cli = sys.argv[1]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    out = subprocess.run([cli, "cache-watch", "--url", url, "--api-key", KEY, "--seconds", "2",
                          "--json"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    # After the resync: root-level node [1,2] (1 block) + [3,4,11,12] (2 blocks).
    assert j["blocks"] == 3, j
    assert j["malformed_messages"] == 2, j
    assert j["resyncs"] == 1 and j["seq_gaps"] >= 1, j
    assert j["connected"] is False, j
    assert j["roots"] == 1 and j["max_depth_blocks"] == 3, j
    bad = subprocess.run([cli, "cache-watch", "--url", url, "--api-key", "wrong", "--seconds",
                          "1"], capture_output=True, text=True, timeout=30)
    assert bad.returncode != 0 and "refused the API key" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    srv.shutdown()
    print("ok", j)


if __name__ == "__main__":
    main()

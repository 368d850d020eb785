#!/usr/bin/python3
"""Slow clients against `radixchat-cli serve`.

200 clients on 127.0.0.2 (loopback, another address than the checks)
connect, send the start of a request a few bytes at a time, and reconnect
when the server closes on them, for a bounded time. Meanwhile /health,
asked from 127.0.0.1, must answer 200 within 1 s every time, and a chat
request must still be served. With --http-threads 4 the slow clients far
outnumber the workers, so this holds only if a connection still sending
its head holds no worker.
Usage: slow-clients-test.py RADIXCHAT_CLI MODEL
"""
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import Serve, report  # noqa: E402

CLIENTS = 200
SECONDS = 8
SLOW_SOURCE = "127.0.0.2"
HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def slow_client(port, stop, stats):
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2,
                                         source_address=(SLOW_SOURCE, 0))
        except OSError:
            stats["refused"] += 1
            time.sleep(0.05)
            continue
        stats["connects"] += 1
        try:
            for i in range(len(HEAD)):
                if stop.is_set():
                    break
                s.sendall(HEAD[i:i + 1])
                time.sleep(0.2)
        except OSError:
            stats["closed_by_server"] += 1
        finally:
            s.close()


def main():
    cli, model = sys.argv[1], sys.argv[2]
    try:
        socket.create_connection  # noqa: B018
        probe = socket.socket()
        probe.bind((SLOW_SOURCE, 0))
        probe.close()
    except OSError:
        print("cannot bind %s; skipping" % SLOW_SOURCE)
        return 77
    failures = []
    srv = Serve(cli, model, "--http-threads", "4", "--max-viewers", "2")
    stop = threading.Event()
    stats = {"connects": 0, "refused": 0, "closed_by_server": 0}
    threads = [threading.Thread(target=slow_client, args=(srv.port, stop, stats), daemon=True)
               for _ in range(CLIENTS)]
    try:
        for t in threads:
            t.start()
        time.sleep(1.0)  # every worker would be taken by now
        checks, slow = 0, []
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            try:
                status, _, secs = srv.timed("GET", "/health", timeout=5)
            except OSError as e:
                status, secs = str(e), 5.0
            checks += 1
            if status != 200 or secs > 1.0:
                slow.append((status, round(secs, 2)))
            time.sleep(0.2)
        body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
        status, _, secs = srv.timed("POST", "/v1/chat/completions", body,
                                    {"Content-Type": "application/json"}, timeout=30)
        print("%d slow clients: %s; /health %d checks, %d slow or failed %s; chat HTTP %d in "
              "%.2f s" % (CLIENTS, stats, checks, len(slow), slow[:5], status, secs))
        if slow:
            failures.append("/health did not answer 200 within 1 s %d times" % len(slow))
        if status != 200:
            failures.append("a chat request among slow clients: HTTP %d" % status)
    finally:
        stop.set()
        for t in threads:
            t.join(5)
        srv.stop()
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Overload is answered, never dropped: many clients against `serve` on a
machine whose CPUs are held by busy loops.

Starts `radixchat-cli serve` (loopback, a free port) and --busy processes
that spin, then runs --clients threads that each open a fresh connection
per request and stream a short chat completion, for --duration seconds.
Every reply must be a complete 200 stream or a 503 carrying Retry-After
(after which the client waits that long); a reset, a refused or dropped
connection, a timeout or any other status is a failure. Exit 0 only with
no failure and at least one 200. Python standard library only.

Example (the README's full-length run):
  tests/app/server/overload-test.py build/app/radixchat-cli \
      --model assets/model/radixchat-demo.gguf --clients 512 --busy 8 --duration 600
"""
import argparse
import collections
import http.client
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time


def spin():
    while True:
        pass


def one_request(conn, body):
    """(kind, detail): kind is ok, busy (503 + Retry-After) or a failure name."""
    try:
        conn.request("POST", "/v1/chat/completions", body=body,
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        if r.status == 503:
            after = r.getheader("Retry-After")
            if after is None or not after.isdigit():
                return "503 without Retry-After", data[:120]
            return "busy", int(after)
        if r.status != 200:
            return "HTTP %d" % r.status, data[:120]
        if b"data: [DONE]" not in data:
            return "stream without [DONE]", data[-120:]
        return "ok", None
    except (ConnectionResetError, BrokenPipeError) as e:
        return "reset", str(e)
    except http.client.RemoteDisconnected as e:
        return "dropped", str(e)
    except OSError as e:  # refused, timed out
        return type(e).__name__, str(e)
    except http.client.HTTPException as e:
        return type(e).__name__, str(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("server_bin")
    ap.add_argument("--model")
    ap.add_argument("--clients", type=int, default=512)
    ap.add_argument("--busy", type=int, default=8, help="busy-loop processes holding the CPUs")
    ap.add_argument("--duration", type=float, default=20, help="seconds (at most 1800)")
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1, help="--threads for the server")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a client waits for a reply")
    ap.add_argument("--keep-alive", action="store_true",
                    help="reuse each client's connection (default: a fresh one per request)")
    args = ap.parse_args()
    args.duration = min(args.duration, 1800)

    cmd = [args.server_bin, "serve", "--port", "0", "--threads", str(args.threads)]
    if args.model:
        cmd += ["--model", args.model]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    busy = []
    counts = collections.Counter()
    samples = {}
    try:
        m = re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline())
        if not m:
            print("FAIL: the server did not start")
            return 1
        port = int(m.group(1))
        busy = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy)]
        for p in busy:
            p.start()
        lock = threading.Lock()
        deadline = time.monotonic() + args.duration
        body = json.dumps({"messages": [{"role": "user", "content": "What is a radix tree?"}],
                           "max_tokens": args.max_tokens, "stream": True}).encode()

        def client():
            conn = None
            while time.monotonic() < deadline:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=args.timeout)
                kind, detail = one_request(conn, body)
                if not args.keep_alive or kind != "ok":
                    conn.close()
                    conn = None
                with lock:
                    counts[kind] += 1
                    samples.setdefault(kind, detail)
                if kind == "busy":
                    time.sleep(min(detail, max(0.0, deadline - time.monotonic())))
            if conn is not None:
                conn.close()

        threading.stack_size(256 * 1024)
        t0 = time.monotonic()
        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        load = os.getloadavg()[0]
    finally:
        for p in busy:
            p.kill()
            p.join()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()

    failures = {k: v for k, v in counts.items() if k not in ("ok", "busy")}
    total = sum(counts.values())
    print("%d clients, %d busy loops, %.1f s, load average %.1f: %d requests, %d answered 200, "
          "%d answered 503 with Retry-After, %d resets, %d other failures" %
          (args.clients, args.busy, wall, load, total, counts["ok"], counts["busy"],
           counts["reset"], sum(failures.values()) - counts["reset"]))
    for kind, n in sorted(failures.items()):
        print("  %s: %d (e.g. %r)" % (kind, n, samples[kind]))
    ok = counts["ok"] > 0 and not failures
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

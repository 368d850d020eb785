#!/usr/bin/python3
"""Hostile response_format schemas against `radixchat-cli serve`.

  - a 3 KB schema whose $defs nest 40 levels of
    {"allOf": [{"$ref": next}, {"$ref": next}]} (2^40 expansions) is a 400
    naming the limit, within 1 s;
  - four of them at once leave /health answering within 1 s each;
  - a schema of 4,000 optional properties is answered (200 or a 400 naming
    a limit) within 10 s, not after minutes of CPU;
  - SIGTERM while such schemas compile stops the server within its grace.
Usage: schema-bounds-test.py RADIXCHAT_CLI MODEL
"""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import Serve, report  # noqa: E402

GRACE_S = 2


def nested_all_of(levels):
    defs = {}
    for i in range(levels):
        nxt = {"$ref": "#/$defs/d%d" % (i + 1)}
        defs["d%d" % i] = {"allOf": [nxt, nxt]}
    defs["d%d" % levels] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def chat(schema, max_tokens=4):
    return json.dumps({
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": max_tokens,
        "temperature": 0,
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "x", "schema": schema}}})


def post(srv, body, timeout=120):
    return srv.timed("POST", "/v1/chat/completions", body,
                     {"Content-Type": "application/json"}, timeout)


def main():
    cli, model = sys.argv[1], sys.argv[2]
    failures = []
    bomb = chat(nested_all_of(40))
    print("schema: %d bytes" % len(bomb))
    # Four workers, all of which one client may use: four schemas at once
    # hold every worker but the ones /health has.
    srv = Serve(cli, model, "--http-threads", "4", "--max-client-connections", "4",
                "--max-viewers", "2", "--shutdown-grace", str(GRACE_S))
    try:
        status, text, secs = post(srv, bomb)
        print("40-level allOf: HTTP %d in %.2f s: %s" % (status, secs, text[:200]))
        if status != 400 or secs > 1.0 or "limit" not in text:
            failures.append("40-level allOf: want a 400 naming the limit within 1 s")

        results = []
        workers = [threading.Thread(target=lambda: results.append(post(srv, bomb)))
                   for _ in range(4)]
        for w in workers:
            w.start()
        health = []
        while any(w.is_alive() for w in workers) or len(health) < 3:
            health.append(srv.timed("GET", "/health", timeout=5))
            if len(health) > 50:
                break
        for w in workers:
            w.join(60)
        slow = [h for h in health if h[0] != 200 or h[2] > 1.0]
        print("four at once: %s; /health %d checks, slowest %.2f s" %
              ([r[0] for r in results], len(health), max(h[2] for h in health)))
        if slow or sorted(r[0] for r in results) != [400] * 4:
            failures.append("four at once: /health must answer 200 within 1 s, each a 400")

        props = {"p%d" % i: {"type": "integer"} for i in range(4000)}
        status, text, secs = post(srv, chat({"type": "object", "properties": props}), 60)
        print("4,000 optional properties: HTTP %d in %.2f s: %s" % (status, secs, text[:160]))
        if secs > 10 or status not in (200, 400) or (status == 400 and "limit" not in text):
            failures.append("4,000 properties: want an answer within 10 s")

        # SIGTERM while four bombs compile (slow ones: the limits are the
        # server's, so the bombs are as slow as they are allowed to be).
        for _ in range(4):
            threading.Thread(target=lambda: post(srv, bomb), daemon=True).start()
        time.sleep(0.1)
        secs = srv.stop()
        print("SIGTERM during compilation: exited in %.2f s (grace %d s)" % (secs, GRACE_S))
        if secs > GRACE_S + 1:
            failures.append("SIGTERM: did not exit within the grace")
    finally:
        srv.stop()
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Deeply nested JSON bodies against `radixchat-cli serve`.

Twenty bodies nested 20,000 levels deep (a response_format schema, in the
messages, in a field the server ignores, unclosed, and sent cross-site as
text/plain) are each
refused with a 400 naming the nesting limit, and afterwards the server's
resident size (VmRSS in /proc/PID/status) is within 50 MiB of where it
started; a normal request still answers 200.
Usage: hostile-body-test.py RADIXCHAT_CLI MODEL
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import Serve, report  # noqa: E402

LEVELS = 20000
SLACK_KIB = 50 * 1024


def bodies():
    deep = "[" * LEVELS + "]" * LEVELS
    msg = '{"role":"user","content":"hi"}'
    # A 740 KB response_format schema: the costliest shape for a server
    # that builds the DOM first (hundreds of MB per request).
    schema = '{"type":"object","properties":{"a":' * LEVELS + '{"type":"integer"}' + "}}" * LEVELS
    yield "schema", ('{"messages":[%s],"max_tokens":1,"response_format":{"type":"json_schema",'
                     '"json_schema":{"name":"x","schema":%s}}}' % (msg, schema)), "application/json"
    yield "in messages", '{"messages":[%s,%s],"max_tokens":1}' % (msg, deep), "application/json"
    yield "ignored field", '{"messages":[%s],"max_tokens":1,"x_vendor":%s}' % (msg, deep), \
        "application/json"
    yield "unclosed", '{"messages":[%s],"x":%s' % (msg, "{\"a\":" * LEVELS), "application/json"
    yield "text/plain", '{"messages":[%s],"x":%s}' % (msg, deep), "text/plain"


def main():
    cli, model = sys.argv[1], sys.argv[2]
    failures = []
    srv = Serve(cli, model)
    try:
        ok = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
        status, _, _ = srv.request("POST", "/v1/chat/completions", ok,
                                   {"Content-Type": "application/json"})
        start = srv.rss_kib()
        print("RSS at start: %d KiB" % start)
        cases = list(bodies())
        for i in range(20):
            name, body, ctype = cases[i % len(cases)]
            status, _, text = srv.request("POST", "/v1/chat/completions", body,
                                          {"Content-Type": ctype})
            if status != 400 or "nest" not in text:
                failures.append("%s: HTTP %d, not a 400 about nesting: %s" %
                                (name, status, text[:120]))
        end = srv.rss_kib()
        print("RSS after twenty %d-level bodies: %d KiB (%+d KiB)" % (LEVELS, end, end - start))
        if end - start > SLACK_KIB:
            failures.append("RSS grew by %d KiB, more than 50 MiB" % (end - start))
        status, _, text = srv.request("POST", "/v1/chat/completions", ok,
                                      {"Content-Type": "application/json"})
        if status != 200:
            failures.append("a normal request afterwards: HTTP %d %s" % (status, text[:120]))
    finally:
        srv.stop()
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())

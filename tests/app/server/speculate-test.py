#!/usr/bin/python3
"""Drafted decoding through `radixchat-cli serve`: the same replies as
--speculate off (greedy and seeded sampling, plain and streamed, with and
without a stop string), with drafts verified and kept (/metrics).
Loopback only; every request has a timeout; the servers are stopped."""
import http.client
import json
import re
import signal
import subprocess
import sys

MESSAGES = [{"role": "user", "content": "Tell me about the radix tree and the cache."}]


def start(cli, model, speculate):
    p = subprocess.Popen([cli, "serve", "--model", model, "--port", "0", "--threads", "2",
                          "--speculate", speculate],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"http://127\.0\.0\.1:(\d+)/v1", p.stdout.readline())
    if not m:
        p.kill()
        raise SystemExit("serve did not start")
    return p, int(m.group(1))


def request(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        c.request(method, path, json.dumps(body) if body else None,
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def reply(port, body):
    status, data = request(port, "POST", "/v1/chat/completions", body)
    if status != 200:
        raise SystemExit(f"HTTP {status}: {data}")
    if not body.get("stream"):
        return json.loads(data)["choices"][0]["message"]["content"]
    out = ""
    for line in data.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            for ch in json.loads(line[6:]).get("choices", []):
                out += ch.get("delta", {}).get("content") or ""
    return out


def replies(cli, model, speculate):
    p, port = start(cli, model, speculate)
    try:
        out = []
        for stream in (False, True, True):  # asked again: the tree drafts the reply
            for stop in ([], ["cache"]):
                out.append(reply(port, {"messages": MESSAGES, "max_tokens": 60, "temperature": 0,
                                        "stream": stream, "stop": stop}))
        for _ in range(2):
            out.append(reply(port, {"messages": MESSAGES, "max_tokens": 60, "temperature": 0.9,
                                    "seed": 5}))
        _, metrics = request(port, "GET", "/metrics")
        kept = re.search(r'radixchat_draft_tokens_total\{state="accepted"\} (\d+)', metrics)
        return out, int(kept.group(1)) if kept else -1
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


def main():
    cli, model = sys.argv[1], sys.argv[2]
    plain, kept_plain = replies(cli, model, "off")
    drafted, kept = replies(cli, model, "tree")
    ok = plain == drafted and kept_plain == 0 and kept > 0
    print(f"{len(plain)} replies, identical: {plain == drafted}; draft tokens kept: {kept}")
    for a, b in zip(plain, drafted):
        if a != b:
            print(f"FAIL: off {a!r}\n      tree {b!r}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A recording made from KV events (cache-watch --record) reads honestly.

`serve --kv-events` (bundled model, page size 1: a block per token) is
followed by `cache-watch --record` while three chats that share a system
prompt run. The recording then must say what it cannot know: cache-report
prints "pool size unknown", "model unknown" and "hit rate n/a" (JSON: null),
never "0 pages" or "0.0%"; and cache-export must fold single-child block
chains into radix nodes: as many boxes as the server's own radix tree has
once its single-child runs are folded the same way, each labelled with its
length in blocks, the blocks adding up to the cached tokens.

Usage: kv-events-recording-test.py RADIXCHAT_CLI MODEL WORKDIR. Exit 77:
skipped without python3-zmq (the publisher's tests need it too).
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "py"))
from serve_client import free_port, post, start_serve, stop_serve  # noqa: E402

try:
    import zmq  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e} (install python3-zmq)")
    sys.exit(77)


def main():
    cli, model, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    rec, svg = os.path.join(work, "kv-events.db"), os.path.join(work, "kv-events.svg")
    for f in (rec, svg):
        if os.path.exists(f):
            os.remove(f)
    pub = free_port()
    server, port = start_serve(cli, "--model", model, "--threads", "1", "--cache", "radix",
                               "--kv-tokens", "4096", "--kv-events", f"tcp://127.0.0.1:{pub}")
    base = f"http://127.0.0.1:{port}/v1"
    failures = []
    try:
        watch = subprocess.Popen([cli, "cache-watch", "--kv-events", f"tcp://127.0.0.1:{pub}",
                                  "--record", rec, "--seconds", "5", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        system = "You are a careful assistant. Answer in one short sentence, plainly."
        for q in ("What is a cat?", "What is a dog?", "What is a bird?"):
            post(base + "/chat/completions",
                 {"messages": [{"role": "system", "content": system},
                               {"role": "user", "content": q}],
                  "max_tokens": 8, "temperature": 0})
        with urllib.request.urlopen(base.replace("/v1", "/v1/cache?text=0"), timeout=30) as r:
            snap = json.load(r)
        out, err = watch.communicate(timeout=60)
        assert watch.returncode == 0, err
        watched = json.loads(out)
        # The server's tree with its single-child runs folded: a node starts
        # a box when its parent is the root or has other children.
        kids = {}
        for n in snap["nodes"]:
            kids.setdefault(n["parent"], []).append(n["id"])
        root = next(n["id"] for n in snap["nodes"] if n["parent"] is None)
        server_nodes = sum(1 for n in snap["nodes"] if n["parent"] is not None and
                           (n["parent"] == root or len(kids[n["parent"]]) != 1))
        cached = sum(len(n.get("tokens", [])) for n in snap["nodes"] if n["parent"] is not None)

        report = subprocess.run([cli, "cache-report", rec], capture_output=True, text=True)
        text = report.stdout
        for want in ("pool size unknown", "model unknown", "hit rate n/a"):
            if want not in text:
                failures.append(f"cache-report lacks '{want}'")
        for bad in (" 0 pages", "0.0%", "model ?"):
            if bad in text:
                failures.append(f"cache-report says '{bad}'")
        rj = json.loads(subprocess.run([cli, "cache-report", rec, "--json"],
                                       capture_output=True, text=True).stdout)
        if rj.get("hit_rate") is not None or rj.get("total_pages") is not None:
            failures.append(f"cache-report --json: hit_rate {rj.get('hit_rate')}, "
                            f"total_pages {rj.get('total_pages')} (want null)")

        ex = subprocess.run([cli, "cache-export", rec, "--out", svg], capture_output=True,
                            text=True)
        assert ex.returncode == 0, ex.stderr
        doc = open(svg, encoding="utf-8").read()
        boxes = re.findall(r'<g class="node" data-id="(\d+)" data-tokens="(\d+)"', doc)
        runs = [int(n) for n in re.findall(r">(\d+) blocks: ", doc)]
        drawn = len(boxes) - 1  # the root box
        tokens = sum(int(t) for i, t in boxes if i != "0")
        print(f"server: {server_nodes} radix nodes folded, {cached} cached tokens; watched "
              f"{watched['blocks']} blocks; cache-export: {drawn} boxes, {tokens} tokens, "
              f"runs {sorted(runs, reverse=True)}")
        if watched["blocks"] != cached:
            failures.append("cache-watch did not hold every block")
        if drawn != server_nodes:
            failures.append(f"{drawn} boxes drawn, the server's tree has {server_nodes} nodes")
        if tokens != cached or not runs or max(runs) < 20:
            failures.append("folded boxes do not add up to the cached blocks")
        print(text.splitlines()[0])
    finally:
        stop_serve(server)
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else "FAIL")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Attaching late to `serve --kv-events` gives the whole tree.

The server (bundled model, page size 1: one block per cached token) is
given chats until its cache holds at least 500 blocks. Only then does
`radixchat-cli cache-watch` attach: once with the replay endpoint and once
without it. Both times it must hold exactly the cache's pages, with no block
under an unknown parent, because RadixChat's publisher answers a new
subscription with a snapshot of the whole tree.

Usage: kv-late-attach-test.py RADIXCHAT_CLI MODEL. Exit 77: skipped (no
python3-zmq, which the publisher test needs too).
"""
import json
import pathlib
import subprocess
import sys
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "py"))
from serve_client import free_port, post, start_serve, stop_serve  # noqa: E402

try:
    import zmq  # noqa: F401 - only the skip decision needs it
except ImportError as e:
    print(f"SKIP: {e} (install python3-zmq)")
    sys.exit(77)


def cache_pages(base):
    with urllib.request.urlopen(base.replace("/v1", "/v1/cache?text=0"), timeout=30) as r:
        snap = json.load(r)
    return sum(len(n.get("pages", [])) for n in snap["nodes"] if n["parent"] is not None), snap


def main():
    cli, model = sys.argv[1], sys.argv[2]
    pub, rep = free_port(), free_port()
    server, port = start_serve(cli, "--model", model, "--threads", "1", "--cache", "radix",
                               "--kv-tokens", "4096", "--kv-events", f"tcp://127.0.0.1:{pub}",
                               "--kv-events-replay", f"tcp://127.0.0.1:{rep}")
    base = f"http://127.0.0.1:{port}/v1"
    ok = True
    try:
        system = "You are a patient teacher. Explain each idea in plain words, with one example."
        topics = ["radix trees", "hash maps", "queues", "stacks", "heaps", "graphs", "tries",
                  "sorting", "caches", "pages", "threads", "sockets", "files", "tokens",
                  "locks", "arrays", "lists", "sets", "bits", "bytes", "clocks", "disks",
                  "networks", "compilers", "kernels", "shells", "editors", "databases"]
        pages, snap = 0, None
        for i, t in enumerate(topics):
            post(base + "/chat/completions",
                 {"messages": [{"role": "system", "content": system},
                               {"role": "user", "content": f"Tell me about {t}, please."}],
                  "max_tokens": 24, "temperature": 0})
            pages, snap = cache_pages(base)
            if pages >= 500:
                break
        assert pages >= 500, f"only {pages} pages cached after {len(topics)} chats"
        assert snap["stats"].get("evictions", 0) == 0, snap["stats"]
        for label, extra in (("with replay", ["--replay", f"tcp://127.0.0.1:{rep}"]),
                             ("without replay", [])):
            w = subprocess.run([cli, "cache-watch", "--kv-events", f"tcp://127.0.0.1:{pub}",
                                "--seconds", "2", "--json"] + extra,
                               capture_output=True, text=True, timeout=60)
            assert w.returncode == 0, (w.returncode, w.stderr)
            got = json.loads(w.stdout)
            want = {"blocks": pages, "unknown_parent_blocks": 0, "dropped_messages": 0,
                    "malformed_messages": 0}
            bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
            print(f"late attach {label}: {got.get('blocks')} blocks, cache {pages} pages, "
                  f"{got.get('history_messages')} messages replayed: {'ok' if not bad else bad}")
            ok &= not bad
    finally:
        stop_serve(server)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Sharing through Redis, measured: bench-report.sh's helper.

Starts a private redis-server (loopback, a password) and two
`radixchat-cli serve` processes on it. Server A answers a chat with a long
system prompt; once A's blocks are written, server B is asked another
question under the same system prompt (its prompt loads from Redis), then a
question under a system prompt of the same length nobody computed (B
recomputes all of it). Prints one JSON object: the prompt lengths, the
tokens B loaded, both times to first token (streamed, first content chunk)
and their ratio.

  bench-tiers-share.py CLI MODEL THREADS SYSTEM_WORDS
"""
import json
import pathlib
import socket
import subprocess
import sys
import time

# The seeded prompt text, free ports and server helpers of the tests' scripts.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "py"))
from serve_client import (free_port, start_serve, stop_serve, stream_ttft,  # noqa: E402
                          text, tier_writes_done)

PASSWORD = "rc-bench-share"


def serve(cli, model, threads, url):
    return start_serve(cli, "--model", model, "--threads", threads, "--kv-redis", url,
                       "--kv-redis-tenant", "bench")


def ttft(port, messages):
    """Seconds to the first content chunk, and the usage of the reply."""
    return stream_ttft(port, {"messages": messages, "max_tokens": 4, "temperature": 0})


def main():
    cli, model, threads, words = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                              "--requirepass", PASSWORD, "--save", "", "--appendonly", "no"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = []
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"redis://:{PASSWORD}@127.0.0.1:{port}"
        a, port_a = serve(cli, model, threads, url)
        procs.append(a)
        system = {"role": "system", "content": text(words, 1)}
        ttft(port_a, [system, {"role": "user", "content": "What is the first rule?"}])
        while not tier_writes_done(port_a):
            time.sleep(0.1)
        stop_serve(a)
        b, port_b = serve(cli, model, threads, url)
        procs.append(b)
        shared, usage = ttft(port_b, [system, {"role": "user", "content": "And the last one?"}])
        fresh_system = {"role": "system", "content": text(words, 2)}
        fresh, fresh_usage = ttft(port_b,
                                  [fresh_system, {"role": "user", "content": "And the last one?"}])
        print(json.dumps({
            "prompt_tokens": usage["prompt_tokens"],
            "loaded_tokens": usage["prompt_tokens_details"].get("tier_loaded_tokens", 0),
            "fresh_prompt_tokens": fresh_usage["prompt_tokens"],
            "ttft_ms_shared": 1000 * shared,
            "ttft_ms_recompute": 1000 * fresh,
            "ratio": shared / fresh,
        }))
    finally:
        for p in procs:
            stop_serve(p)
        redis.kill()
        redis.wait()


if __name__ == "__main__":
    main()

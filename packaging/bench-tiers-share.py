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
import http.client
import json
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

# The seeded prompt text and free ports of the tests' scripts.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "py"))
from serve_client import free_port, text  # noqa: E402

PASSWORD = "rc-bench-share"


def serve(cli, model, threads, url):
    proc = subprocess.Popen([cli, "serve", "--model", model, "--port", "0", "--threads", threads,
                             "--kv-redis", url, "--kv-redis-tenant", "bench"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r":(\d+)/v1", proc.stdout.readline())
    if not m:
        proc.kill()
        raise SystemExit("serve did not start")
    return proc, int(m.group(1))


def ttft(port, messages):
    """Seconds to the first content chunk, and the usage of the reply."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = {"messages": messages, "max_tokens": 4, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    t0 = time.monotonic()
    conn.request("POST", "/v1/chat/completions", json.dumps(body),
                 {"Content-Type": "application/json"})
    r = conn.getresponse()
    first, usage = None, None
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if first is None and chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
            first = time.monotonic() - t0
        if chunk.get("usage"):
            usage = chunk["usage"]
    conn.close()
    return first, usage


def queue_empty(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/metrics")
    body = conn.getresponse().read().decode()
    conn.close()
    m = re.search(r"^radixchat_tier_write_queue_bytes (\S+)$", body, re.M)
    return m is not None and float(m.group(1)) == 0


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
        while not queue_empty(port_a):
            time.sleep(0.1)
        a.send_signal(signal.SIGTERM)
        a.wait()
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
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait()
        redis.kill()
        redis.wait()


if __name__ == "__main__":
    main()

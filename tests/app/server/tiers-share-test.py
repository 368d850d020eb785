#!/usr/bin/python3
"""Two `radixchat-cli serve` processes share their KV cache through Redis.

A private redis-server (loopback, a password) and two servers pointed at it:
  - server A answers a chat with a long system prompt; its blocks are
    written through to Redis;
  - server B, asked a different question under the same system prompt,
    loads the prompt's blocks from Redis (usage says how many tokens) and
    answers exactly what a server without tiers answers;
  - Redis is killed: B still answers every request (200), and /v1/models and
    /metrics say the tier is down; Redis comes back on the same port: the
    tier is up again and B writes to it.
A wrong password is one clear error at start. TTFTs are printed (figures
belong to the benchmarks, not to assertions). Exit 77 (skip) without
redis-server.
"""
import http.client
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "py"))
from serve_client import free_port, start_serve, stop_serve, text, tier_writes_done  # noqa: E402

PASSWORD = "rc-share-test-pw"


class Redis:
    def __init__(self, port):
        self.port = port
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--requirepass",
             PASSWORD, "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def kill(self):
        self.proc.kill()
        self.proc.wait()


class Server:
    def __init__(self, cli, model, *args):
        self.proc, self.port = start_serve(cli, "--model", model, "--threads", "1", *args,
                                           stderr=subprocess.PIPE)

    def get(self, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request("GET", path)
            r = conn.getresponse()
            return r.status, r.read().decode()
        finally:
            conn.close()

    def ask(self, messages):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            body = {"messages": messages, "max_tokens": 8, "temperature": 0}
            t0 = time.monotonic()
            conn.request("POST", "/v1/chat/completions", json.dumps(body),
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            data = json.loads(r.read())
            elapsed = time.monotonic() - t0
            if r.status != 200:
                raise RuntimeError(f"HTTP {r.status}: {data}")
            return data["choices"][0]["message"]["content"], data["usage"], elapsed
        finally:
            conn.close()

    def metric(self, name, tier):
        _, body = self.get("/metrics")
        m = re.search(rf'^{name}{{tier="{tier}"}} (\S+)$', body, re.M)
        return float(m.group(1)) if m else None

    def queue_empty(self):
        return tier_writes_done(self.port)

    def redis_state(self):
        _, body = self.get("/v1/models")
        for t in json.loads(body)["data"][0]["cache_tiers"]:
            if t["name"] == "redis":
                return t["state"], t["error"]
        return None, None

    def stop(self):
        stop_serve(self.proc)


def wait_for(cond, what, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise RuntimeError("timed out waiting for " + what)


def main():
    cli, make_model = sys.argv[1], sys.argv[2]
    if shutil.which("redis-server") is None:
        if os.environ.get("RADIXCHAT_TESTS_MUST_RUN"):
            print("FAIL: redis-server is not installed (RADIXCHAT_TESTS_MUST_RUN is set)")
            return 1
        print("skip: redis-server is not installed")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "share.gguf")
        subprocess.run([make_model, "--arch", "llama", "--dim", "256", "--layers", "2",
                        "--heads", "4", "--kv-heads", "2", "--ffn", "512", "--vocab", "2000",
                        "--ctx", "4096", "--type", "q4_k_m", "--seed", "11", "--out", model],
                       check=True)
        system = {"role": "system", "content": text(420, 5)}
        ask_a = [system, {"role": "user", "content": "What is the first rule?"}]
        ask_b = [system, {"role": "user", "content": "And the last one?"}]
        port = free_port()
        redis = Redis(port)
        url = f"redis://:{PASSWORD}@127.0.0.1:{port}"
        servers = []
        try:
            try:
                Server(cli, model, "--kv-redis", f"redis://:bad-secret-7@127.0.0.1:{port}").stop()
                failures.append("a wrong Redis password did not stop serve")
            except RuntimeError as e:
                if "password" not in str(e).lower() or "bad-secret-7" in str(e):
                    failures.append(f"wrong password: unclear or leaking error: {e}")
            ref = Server(cli, model)
            servers.append(ref)
            want_b, ref_usage, ref_s = ref.ask(ask_b)
            a = Server(cli, model, "--kv-redis", url, "--kv-redis-tenant", "share")
            b = Server(cli, model, "--kv-redis", url, "--kv-redis-tenant", "share")
            servers += [a, b]
            a.ask(ask_a)
            wait_for(a.queue_empty, "server A's writes to Redis")
            got_b, usage, b_s = b.ask(ask_b)
            loaded = usage["prompt_tokens_details"].get("tier_loaded_tokens", 0)
            print(f"system prompt {usage['prompt_tokens']} tokens; B loaded {loaded} from Redis; "
                  f"request {1000 * b_s:.0f} ms vs {1000 * ref_s:.0f} ms recomputing", flush=True)
            if loaded < 64 * ((usage["prompt_tokens"] - 80) // 64):
                failures.append(f"server B loaded only {loaded} of {usage['prompt_tokens']} tokens")
            if got_b != want_b:
                failures.append(f"B's reply {got_b!r} != the untiered server's {want_b!r}")

            redis.kill()
            for i in range(3):
                b.ask([{"role": "system", "content": text(200, 100 + i)},
                       {"role": "user", "content": "Go on."}])
            state, error = b.redis_state()
            if state != "down" or not error:
                failures.append(f"after Redis died the tier says {state!r} ({error!r})")
            if b.metric("radixchat_tier_up", "redis") != 0:
                failures.append("/metrics does not say the Redis tier is down")

            redis = Redis(port)
            time.sleep(1.5)  # past the reconnect interval
            puts = b.metric("radixchat_tier_puts_total", "redis") or 0
            for i in range(3):
                b.ask([{"role": "system", "content": text(300, 200 + i)},
                       {"role": "user", "content": "Again."}])
            wait_for(b.queue_empty, "server B's writes after Redis came back")
            state, _ = b.redis_state()
            if state != "up":
                failures.append(f"Redis is back but the tier says {state!r}")
            if (b.metric("radixchat_tier_puts_total", "redis") or 0) <= puts:
                failures.append("Redis is back but nothing was written to it")
        finally:
            for s in servers:
                s.stop()
            redis.kill()
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("two servers shared blocks through Redis; its death failed no request")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

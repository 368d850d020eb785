#!/usr/bin/python3
"""Load test for `radixchat-cli serve`: N concurrent streaming chat clients.

Python standard library only. Loopback only. Bounded in time (--duration)
and in requests (--max-requests). Starts the server itself (--server-bin,
on a free port) or attaches to one (--url, loopback addresses only).

Reports errors, requests/s, TTFT p50/p99 (client side, to the first content
token), output tokens/s, and the KV pool and server RSS before and after,
then checks that nothing leaked: no request active, no page held or
protected, RSS back near its warmed-up baseline. Exit status 0 only when at
least one request completed, every metric the checks read was present, and
the run had no errors and no leak.

Example (docs/notes/reliability.md's figures):
  tests/app/server/load-test.py --server-bin build/app/radixchat-cli \
      --clients 32 --duration 180 --max-requests 20000
"""
import argparse
import http.client
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

SYSTEM_PROMPTS = [
    "You are a helpful assistant. Answer briefly and precisely.",
    "You are a teacher explaining data structures to a student. Use simple words.",
    "You are a systems engineer. You care about memory, latency and correctness.",
    "You are a friendly chat bot on a local computer. Keep answers short.",
]
QUESTIONS = [
    "What is a radix tree?", "How does a KV cache speed up decoding?",
    "Why is prefix sharing useful?", "What is eviction?", "Explain LRU.",
    "What does a page pool do?", "What is time to first token?",
    "How do I keep a conversation short?", "What is a token?", "Tell me a fact.",
    "Why do chat apps reuse the system prompt?", "What is continuous batching?",
]

LOOPBACK = ("127.", "localhost", "[::1]", "::1")


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Target:
    def __init__(self, host, port, api_key):
        self.host, self.port, self.api_key = host, port, api_key

    def headers(self):
        h = {"Content-Type": "application/json"}
        if self.api_key:
            h["Authorization"] = "Bearer " + self.api_key
        return h

    def get(self, path, timeout=30):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request("GET", path, headers=self.headers())
            r = conn.getresponse()
            return r.status, r.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def metrics(self):
        status, text = self.get("/metrics")
        if status != 200:
            raise RuntimeError("GET /metrics: HTTP %d" % status)
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out


# Every metric the leak checks read. A missing one (renamed, dropped) is an
# error, not a zero: a zero would pass every check below.
METRICS = {
    "pages_total": "radixchat_kv_pages_total",
    "pages_free": 'radixchat_kv_pages{state="free"}',
    "pages_evictable": 'radixchat_kv_pages{state="evictable"}',
    "pages_protected": 'radixchat_kv_pages{state="protected"}',
    "pages_held": 'radixchat_kv_pages{state="held"}',
    "requests_active": "radixchat_server_requests_active",
    "requests_running": "radixchat_requests_running",
    "rss_bytes": "process_resident_memory_bytes",
    "prompt_tokens": "radixchat_prompt_tokens_total",
    "cached_tokens": "radixchat_cached_prompt_tokens_total",
    "evictions": "radixchat_cache_evictions_total",
}


class MissingMetric(RuntimeError):
    pass


def snapshot(target, pid):
    m = target.metrics()
    missing = [name for name in METRICS.values() if name not in m]
    if missing:
        raise MissingMetric("GET /metrics lacks " + ", ".join(missing))
    snap = {key: m[name] for key, name in METRICS.items()}
    snap["rss_mib"] = snap.pop("rss_bytes") / 2**20
    if snap["pages_total"] <= 0:
        raise MissingMetric("radixchat_kv_pages_total is %g" % snap["pages_total"])
    if pid:  # cross-check RSS from outside the process
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        snap["rss_mib_proc"] = int(line.split()[1]) / 1024
        except OSError:
            pass
    return snap


def one_request(target, conn, rng, args, client_id, n):
    """Streams one chat completion. Returns a result dict (error set on failure)."""
    body = {
        "messages": [
            {"role": "system", "content": rng.choice(SYSTEM_PROMPTS)},
            {"role": "user", "content": rng.choice(QUESTIONS) + (
                " (request %d.%d)" % (client_id, n) if rng.random() < args.unique else "")},
        ],
        "max_tokens": args.max_tokens,
        "temperature": 0.8,
        "seed": client_id * 100003 + n,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if args.ignore_eos:
        body["ignore_eos"] = True
    t0 = time.monotonic()
    conn.request("POST", "/v1/chat/completions", body=json.dumps(body), headers=target.headers())
    r = conn.getresponse()
    if r.status != 200:
        return {"error": "HTTP %d: %s" % (r.status, r.read()[:200])}
    ttft = None
    usage = None
    done = False
    while True:
        line = r.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        data = line[6:]
        if data == b"[DONE]":
            done = True
            continue
        chunk = json.loads(data)
        if "error" in chunk:
            return {"error": "stream error: %s" % chunk["error"].get("message")}
        if chunk.get("usage"):
            usage = chunk["usage"]
        for c in chunk.get("choices", []):
            if ttft is None and (c.get("delta", {}).get("content") or c.get("finish_reason")):
                ttft = time.monotonic() - t0
    total = time.monotonic() - t0
    if not done:
        return {"error": "stream ended without [DONE]"}
    if usage is None:
        return {"error": "no usage chunk"}
    return {"ttft": ttft if ttft is not None else total, "total": total,
            "tokens": usage["completion_tokens"],
            "prompt_tokens": usage["prompt_tokens"],
            "cached_tokens": usage["prompt_tokens_details"]["cached_tokens"]}


def run_clients(target, args):
    lock = threading.Lock()
    results, errors = [], []
    started = [0]
    deadline = time.monotonic() + args.duration

    def client(client_id):
        rng = random.Random(client_id)
        conn = None
        n = 0
        while time.monotonic() < deadline:
            with lock:
                if started[0] >= args.max_requests:
                    return
                started[0] += 1
            n += 1
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(target.host, target.port, timeout=120)
                res = one_request(target, conn, rng, args, client_id, n)
            except Exception as e:  # noqa: BLE001 - every failure is a reported error
                res = {"error": "%s: %s" % (type(e).__name__, e)}
            if "error" in res and conn is not None:
                conn.close()
                conn = None
            with lock:
                (errors if "error" in res else results).append(res)
        if conn is not None:
            conn.close()

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors, time.monotonic() - t0


def start_server(args):
    cmd = [args.server_bin, "serve", "--host", "127.0.0.1", "--port", "0",
           "--cache", args.cache]
    if args.model:
        cmd += ["--model", args.model]
    if args.parallel:
        cmd += ["--parallel", str(args.parallel)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    if args.api_key:
        cmd += ["--api-key", args.api_key]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=None, text=True)
    line = proc.stdout.readline()
    m = re.search(r"http://([^:/]+|\[[^\]]+\]):(\d+)", line)
    if not m:
        proc.kill()
        sys.exit("server did not start: %r" % line)
    return proc, m.group(1), int(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server-bin", help="radixchat-cli to start (on a free loopback port)")
    ap.add_argument("--url", help="attach to a running server instead (loopback only)")
    ap.add_argument("--model", help="--model for the started server")
    ap.add_argument("--cache", default="radix", help="--cache for the started server")
    ap.add_argument("--parallel", type=int, default=32, help="--parallel for the started server")
    ap.add_argument("--threads", type=int, default=0, help="--threads for the started server")
    ap.add_argument("--api-key", default=os.environ.get("RADIXCHAT_API_KEY", ""))
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--duration", type=float, default=120, help="seconds (at most 1800)")
    ap.add_argument("--max-requests", type=int, default=20000)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--unique", type=float, default=0.5,
                    help="fraction of requests with a unique question (new cache leaves)")
    ap.add_argument("--ignore-eos", action="store_true", help="always generate --max-tokens")
    ap.add_argument("--warmup", type=int, default=64, help="requests before the baseline")
    ap.add_argument("--rss-slack-mib", type=float, default=32,
                    help="RSS growth over the warmed-up baseline still counted as no leak")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args()
    args.duration = min(args.duration, 1800)
    args.max_requests = min(args.max_requests, 200000)
    if bool(args.server_bin) == bool(args.url):
        ap.error("give exactly one of --server-bin and --url")

    proc = None
    if args.server_bin:
        proc, host, port = start_server(args)
    else:
        u = urllib.parse.urlparse(args.url)
        host, port = u.hostname, u.port or 80
        if not host.startswith(LOOPBACK):
            ap.error("--url must be a loopback address (this is a load test)")
    target = Target(host, port, args.api_key)
    pid = proc.pid if proc else 0
    try:
        for _ in range(300):
            try:
                if target.get("/health", timeout=2)[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        before_cold = snapshot(target, pid)
        # Warm-up: thread stacks, allocator arenas and the cache's first
        # prefixes settle here, so the baseline is the steady state.
        warm_args = argparse.Namespace(**vars(args))
        warm_args.max_requests, warm_args.duration = args.warmup, 120
        warm_ok, warm_err, _ = run_clients(target, warm_args)
        time.sleep(1.0)
        before = snapshot(target, pid)

        results, errors, wall = run_clients(target, args)
        load_during = os.getloadavg()[0]  # the machine is shared; figures depend on it
        time.sleep(1.0)  # let the last requests finish and the stats publish
        after = snapshot(target, pid)
    finally:
        exit_code = None
        if proc:
            proc.send_signal(signal.SIGTERM)
            try:
                exit_code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                exit_code = "killed after 30 s"

    ttft = [r["ttft"] * 1000 for r in results]
    tokens = sum(r["tokens"] for r in results)
    prompt = sum(r["prompt_tokens"] for r in results)
    cached = sum(r["cached_tokens"] for r in results)
    decode_rates = [(r["tokens"] - 1) / (r["total"] - r["ttft"])
                    for r in results if r["tokens"] > 1 and r["total"] > r["ttft"]]
    leak = []
    if after["requests_active"] or after["requests_running"]:
        leak.append("requests still active")
    if after["pages_held"] or after["pages_protected"]:
        leak.append("pages still held/protected")
    if after["pages_free"] + after["pages_evictable"] != after["pages_total"]:
        leak.append("free + evictable != total pages")
    if after["rss_mib"] > before["rss_mib"] + args.rss_slack_mib:
        leak.append("RSS grew %.1f MiB" % (after["rss_mib"] - before["rss_mib"]))
    report = {
        "clients": args.clients, "duration_s": round(wall, 1), "requests": len(results),
        "errors": len(errors) + len(warm_err), "warmup_requests": len(warm_ok),
        "requests_per_s": round(len(results) / wall, 2) if wall else 0,
        "ttft_ms_p50": round(percentile(ttft, 50), 1),
        "ttft_ms_p99": round(percentile(ttft, 99), 1),
        "output_tokens": tokens,
        "output_tok_s": round(tokens / wall, 1) if wall else 0,
        "per_stream_decode_tok_s": round(statistics.mean(decode_rates), 1) if decode_rates else 0,
        "prompt_tokens": prompt, "cached_prompt_tokens": cached,
        "hit_rate": round(cached / prompt, 3) if prompt else 0,
        "before_cold": before_cold, "before": before, "after": after,
        "leak": leak, "server_exit": exit_code, "loadavg_1m": load_during,
        "error_samples": [e["error"] for e in (errors + warm_err)[:5]],
    }
    ok = bool(results) and not errors and not warm_err and not leak and exit_code in (0, None)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("clients %d, %.1f s, %d requests (%d warm-up first), %d errors; "
              "load average %s during the run" %
              (args.clients, wall, len(results), len(warm_ok), report["errors"],
               round(report["loadavg_1m"], 1)))
        print("requests/s %.2f | TTFT p50 %.1f ms, p99 %.1f ms | output %.1f tok/s "
              "(per stream %.1f tok/s) | prompt hit rate %.3f" %
              (report["requests_per_s"], report["ttft_ms_p50"], report["ttft_ms_p99"],
               report["output_tok_s"], report["per_stream_decode_tok_s"], report["hit_rate"]))
        for label, s in (("cold", before_cold), ("baseline", before), ("after", after)):
            print("%-8s pages total %d free %d evictable %d protected %d held %d | "
                  "evictions %d | active %d | RSS %.1f MiB%s" %
                  (label, s["pages_total"], s["pages_free"], s["pages_evictable"],
                   s["pages_protected"], s["pages_held"], s["evictions"], s["requests_active"],
                   s["rss_mib"],
                   " (/proc %.1f)" % s["rss_mib_proc"] if "rss_mib_proc" in s else ""))
        if proc:
            print("server exit on SIGTERM: %s" % exit_code)
        for e in report["error_samples"]:
            print("error: %s" % e)
        print("leak: " + (", ".join(leak) if leak else "none"))
        if not results:
            print("no request completed")
        print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except MissingMetric as e:
        print("FAIL: %s" % e)
        sys.exit(1)

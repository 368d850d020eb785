#!/usr/bin/python3
"""The cache never changes the answer, through `radixchat-cli serve`.

On a random-weight Q4_K_M llama (written by make-random-gguf), greedy
replies to three prompts with different system prompts (about 300, 600 and
1,300 tokens) must be the same tokens:
  - asked one at a time on a fresh server (the reference),
  - sent all at once to another fresh server (batched together),
  - asked again on the same server, fully cached, for every cache policy
    (radix, radix-page16, hash16, off),
for each KV type (f16, bf16, f32; each compared with its own reference).
Loopback only; every request has a timeout; the servers are stopped.
"""
import http.client
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "py"))
from serve_client import start_serve, stop_serve, text  # noqa: E402

PROMPTS = [
    [{"role": "system", "content": text(n, seed)},
     {"role": "user", "content": "Summarise the rules above in one line."}]
    for n, seed in ((110, 1), (230, 2), (500, 3))
]


class Server:
    def __init__(self, cli, model, *args):
        try:
            self.proc, self.port = start_serve(cli, "--model", model, "--threads", "2", *args)
        except RuntimeError as e:
            raise SystemExit(str(e))

    def ask(self, messages):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            body = {"messages": messages, "max_tokens": 16, "temperature": 0}
            conn.request("POST", "/v1/chat/completions", json.dumps(body),
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            data = json.loads(r.read())
            if r.status != 200:
                raise SystemExit(f"HTTP {r.status}: {data}")
            return data["choices"][0]["message"]["content"], data["usage"]
        finally:
            conn.close()

    def ask_all_at_once(self, prompts):
        out = [None] * len(prompts)

        def one(i):
            out[i] = self.ask(prompts[i])

        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(prompts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out

    def stop(self):
        stop_serve(self.proc)


def main():
    cli, make_model = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "q4km.gguf")
        subprocess.run([make_model, "--arch", "llama", "--dim", "256", "--layers", "2",
                        "--heads", "4", "--kv-heads", "2", "--ffn", "512", "--vocab", "2000",
                        "--ctx", "4096", "--type", "q4_k_m", "--seed", "7", "--out", model],
                       check=True)
        for kv in ("f16", "bf16", "f32"):
            ref = Server(cli, model, "--kv-type", kv)
            try:
                want = [ref.ask(p)[0] for p in PROMPTS]
            finally:
                ref.stop()
            batched = Server(cli, model, "--kv-type", kv)
            try:
                got = [r[0] for r in batched.ask_all_at_once(PROMPTS)]
            finally:
                batched.stop()
            if got != want:
                failures.append(f"kv {kv}: batched replies {got} != one at a time {want}")
            for cache in ("radix", "radix-page16", "hash16", "off"):
                srv = Server(cli, model, "--kv-type", kv, "--cache", cache)
                try:
                    for i, p in enumerate(PROMPTS):
                        cold = srv.ask(p)[0]
                        again, usage = srv.ask(p)
                        cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)
                        if cache != "off" and cached == 0:
                            failures.append(f"kv {kv} {cache}: prompt {i} asked again hit nothing")
                        if cold != want[i] or again != want[i]:
                            failures.append(f"kv {kv} {cache}: prompt {i} cold {cold!r}, "
                                            f"cached {again!r}, reference {want[i]!r}")
                finally:
                    srv.stop()
            print(f"kv {kv}: {len(PROMPTS)} prompts, replies identical "
                  f"{'in every setting' if not failures else 'NOT everywhere'}", flush=True)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""radixchat-cli serve --kv-events, read back by a subscriber written here.

The server runs the bundled model with a small KV pool so chats that share
a system prompt hit, split and evict. A ZeroMQ SUB socket (joined before
the first request) follows the live stream; a DEALER then asks the replay
ROUTER for everything from sequence 0. Each view decodes the vLLM wire
format with python3-msgpack (tagged arrays: BlockStored, BlockRemoved,
AllBlocksCleared), keeps blocks by hash with their parent links, and must
hold exactly the pages /v1/cache reports: each block named by the token
prefix its parent chain spells, each page by its root-to-page tokens, as
multisets, plus every parent link resolving. Run for page size 1 (radix)
and 16 (radix-page16).

While that runs, two `radixchat-cli cache-watch` processes follow the same
server, one through --kv-events (the C++ subscriber) and one through --url
(/v1/cache/events mapped onto blocks); stopped by SIGINT, their --json
block counts must equal /v1/cache's page count, and --url with --model
must print a user's question as token text.

Usage: kv-publish-test.py RADIXCHAT_CLI MODEL. Exit 77: skipped (no
python3-zmq / python3-msgpack).
"""
import json
import pathlib
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "py"))
from serve_client import free_port, post, start_serve, stop_serve  # noqa: E402

try:
    import msgpack
    import zmq
except ImportError as e:
    print(f"SKIP: {e} (install python3-zmq and python3-msgpack)")
    sys.exit(77)


class View:
    """A subscriber's tree: hash -> (parent hash, token ids)."""

    def __init__(self):
        self.blocks = {}
        self.counts = {"stored": 0, "removed": 0, "cleared": 0}
        self.removed_unknown = 0

    def apply(self, payload):
        batch = msgpack.unpackb(payload, raw=False)
        assert isinstance(batch, list) and len(batch) == 3, batch
        for ev in batch[1]:
            tag = ev[0]
            if tag == "AllBlocksCleared":
                self.counts["cleared"] += 1
                self.blocks.clear()
            elif tag == "BlockRemoved":
                self.counts["removed"] += 1
                for h in ev[1]:
                    if self.blocks.pop(h, None) is None:
                        self.removed_unknown += 1
            elif tag == "BlockStored":
                self.counts["stored"] += 1
                hashes, parent, tokens, bs = ev[1], ev[2], ev[3], ev[4]
                assert len(tokens) == bs * len(hashes), (len(tokens), bs, len(hashes))
                for i, h in enumerate(hashes):
                    self.blocks[h] = (parent, tokens[i * bs:(i + 1) * bs])
                    parent = h
            else:
                raise AssertionError(f"unexpected event {tag}")

    def prefixes(self):
        out = []
        for h in self.blocks:
            chain = []
            while h is not None:
                assert h in self.blocks, f"parent {h} not held"
                parent, tokens = self.blocks[h]
                chain.append(tokens)
                h = parent
            out.append(tuple(t for toks in reversed(chain) for t in toks))
        return sorted(out)


def cache_prefixes(snap):
    ps = snap["page_size"]
    nodes = {n["id"]: n for n in snap["nodes"]}
    out = []
    for n in snap["nodes"]:
        if n["parent"] is None:
            continue
        chain, p = [], n
        while p["parent"] is not None:
            chain.append(p)
            p = nodes[p["parent"]]
        path = [t for q in reversed(chain[1:]) for t in q["tokens"]]
        for i, t in enumerate(n["tokens"]):
            path.append(t)
            if (i + 1) % ps == 0:
                out.append(tuple(path))
    return sorted(out)


def run(cli, model, cache, kv_tokens):
    ctx = zmq.Context()
    pub, rep = free_port(), free_port()
    server, port = start_serve(cli, "--model", model, "--threads", "1", "--cache", cache,
                               "--kv-tokens", str(kv_tokens), "--kv-events",
                               f"tcp://127.0.0.1:{pub}", "--kv-events-replay",
                               f"tcp://127.0.0.1:{rep}", stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(f"tcp://127.0.0.1:{pub}")
        watchers = {
            "kv-events": subprocess.Popen(
                [cli, "cache-watch", "--json", "--kv-events", f"tcp://127.0.0.1:{pub}"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            "url": subprocess.Popen(
                [cli, "cache-watch", "--json", "--url", base],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            "url-text": subprocess.Popen(
                [cli, "cache-watch", "--url", base, "--model", model],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        }
        time.sleep(1.0)  # let the subscriptions reach the publisher and the server
        system = "You are a terse assistant who answers in one short line about animals."
        for i, q in enumerate(["cats?", "dogs?", "cats?", "owls and their nests?", "bees?",
                               "cats and dogs?", "fish?"]):
            post(base + "/chat/completions",
                 {"messages": [{"role": "system", "content": system},
                               {"role": "user", "content": q}],
                  "max_tokens": 6, "temperature": 0})
        time.sleep(0.5)
        with urllib.request.urlopen(base.replace("/v1", "/v1/cache?text=0"), timeout=30) as r:
            snap = json.load(r)
        expect = cache_prefixes(snap)
        stats = snap["stats"]
        assert stats["evictions"] > 0 and stats["splits"] > 0, stats
        assert expect, "the cache is empty"

        for name, w in watchers.items():
            w.send_signal(signal.SIGINT)
        outs = {name: w.communicate(timeout=30) for name, w in watchers.items()}
        for name, (out, err) in outs.items():
            assert watchers[name].returncode == 0, (name, out, err)
            if name == "url-text":
                assert "fish?" in out, out  # the latest question is never evicted
                continue
            got = json.loads(out)
            assert got["blocks"] == len(expect), (name, got, len(expect))
            assert got["malformed_messages"] == 0 and got["dropped_messages"] == 0, (name, got)

        live, seqs = View(), []
        while sub.poll(200):
            topic, seq, payload = sub.recv_multipart()
            assert topic == b"kv-events" and len(seq) == 8
            seqs.append(int.from_bytes(seq, "big"))
            live.apply(payload)
        assert seqs and seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
        # The live view joined after seq 0 (the start-up snapshot): replay
        # what it missed first, then what it saw, into a fresh view.
        dealer = ctx.socket(zmq.DEALER)
        dealer.connect(f"tcp://127.0.0.1:{rep}")
        dealer.send_multipart([b"", (0).to_bytes(8, "big")])
        replayed, rseqs = View(), []
        while True:
            assert dealer.poll(5000), "replay did not answer"
            empty, seq, payload = dealer.recv_multipart()
            assert empty == b""
            if seq == (-1).to_bytes(8, "big", signed=True):
                assert payload == b""
                break
            rseqs.append(int.from_bytes(seq, "big"))
            replayed.apply(payload)
        assert rseqs == list(range(0, len(rseqs))) and rseqs[-1] == seqs[-1], (rseqs, seqs)
        assert replayed.counts["cleared"] >= 1  # the start-up snapshot's batch
        got = replayed.prefixes()
        assert got == expect, f"replayed view differs: {len(got)} blocks vs {len(expect)} pages"
        assert replayed.removed_unknown == 0
        assert replayed.counts["removed"] > 0, replayed.counts
        # The live view started late, so it may lack blocks stored before it
        # joined, but everything it holds must be in the cache, and the same
        # blocks with the same parents as in the replayed view.
        for h, b in live.blocks.items():
            assert replayed.blocks.get(h) == b, h
        print(f"{cache}: {len(expect)} pages == {len(got)} blocks; "
              f"{len(rseqs)} messages; {replayed.counts}; evictions={stats['evictions']} "
              f"splits={stats['splits']} merges={stats['merges']}")
    finally:
        stop_serve(server)
        ctx.destroy(linger=0)


def main():
    cli, model = sys.argv[1], sys.argv[2]
    run(cli, model, "radix", 72)
    run(cli, model, "radix-page16", 96)
    print("ok")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""radixchat-cli cache-watch against two KV-event publishers written here.

The publishers follow vLLM's documented wire format: three frames (topic,
8-byte big-endian sequence, msgpack batch), and a ROUTER replay socket that
answers an 8-byte start sequence with (sequence, batch) pairs and then
(-1, b""). Rank 0 speaks the older encoding (tagged arrays, no rank field,
integer hashes, one above 2^63 and one negative); rank 1 the newer one (maps
with a "type" key, unknown fields, bytes hashes, data_parallel_rank=1).
Rank 0 holds one message back so the subscriber must replay it; rank 1
skips a sequence number its replay cannot answer (dropped), sends a
malformed batch and an AllBlocksCleared. The expected JSON comes from a
separate model of the tree kept below. A second run, without --seconds, is
stopped by SIGINT and must print the folded text tree, warn of the message
it lost, and exit 0.

Usage: cache-watch-test.py RADIXCHAT_CLI. Exits 77 (skipped) without
python3-zmq / python3-msgpack.
"""
import json
import signal
import subprocess
import sys
import time

try:
    import msgpack
    import zmq
except ImportError as e:
    print(f"SKIP: {e} (install python3-zmq and python3-msgpack)")
    sys.exit(77)

END_SEQ = (-1).to_bytes(8, "big", signed=True)


class Publisher:
    def __init__(self, ctx):
        # XPUB (wire-compatible with PUB) reports when the subscriber joined,
        # so nothing is published into the void before it connects.
        self.pub = ctx.socket(zmq.XPUB)
        self.pub.bind("tcp://127.0.0.1:*")
        self.replay = ctx.socket(zmq.ROUTER)
        self.replay.bind("tcp://127.0.0.1:*")
        self.buffer = []  # (seq, payload) the replay socket can answer
        self.joined = False

    def endpoints(self):
        return (self.pub.getsockopt_string(zmq.LAST_ENDPOINT),
                self.replay.getsockopt_string(zmq.LAST_ENDPOINT))

    def send(self, seq, payload, live=True, buffered=True):
        if buffered:
            self.buffer.append((seq, payload))
        if live:
            self.pub.send_multipart([b"kv-events", seq.to_bytes(8, "big"), payload])

    def service(self):
        while self.pub.poll(0):
            if self.pub.recv()[:1] == b"\x01":
                self.joined = True
        while self.replay.poll(0):
            frames = self.replay.recv_multipart()
            if len(frames) != 3:
                continue
            client, _, start = frames
            start = int.from_bytes(start, "big")
            for seq, payload in self.buffer:
                if seq >= start:
                    self.replay.send_multipart([client, b"", seq.to_bytes(8, "big"), payload])
            self.replay.send_multipart([client, b"", END_SEQ, b""])


class Model:
    """An independent model of the subscriber's view, for the expected JSON."""

    def __init__(self):
        self.blocks = {}  # (rank, hash) -> parent hash or None
        self.stored = self.removed = self.cleared = 0

    def apply(self, rank, events):
        for ev in events:
            kind = ev[0] if isinstance(ev, list) else ev["type"]
            if kind == "BlockStored":
                hashes = ev[1] if isinstance(ev, list) else ev["block_hashes"]
                parent = ev[2] if isinstance(ev, list) else ev.get("parent_block_hash")
                self.stored += 1
                for h in hashes:
                    self.blocks[(rank, norm(h))] = None if parent is None else norm(parent)
                    parent = h
            elif kind == "BlockRemoved":
                hashes = ev[1] if isinstance(ev, list) else ev["block_hashes"]
                self.removed += 1
                for h in hashes:
                    self.blocks.pop((rank, norm(h)), None)
            elif kind == "AllBlocksCleared":
                self.cleared += 1
                self.blocks = {k: v for k, v in self.blocks.items() if k[0] != rank}

    def shape(self):
        def depth(key):
            d = 1
            while self.blocks.get(key) is not None and (key[0], self.blocks[key]) in self.blocks:
                key = (key[0], self.blocks[key])
                d += 1
            return d
        roots = sum(1 for k, p in self.blocks.items() if p is None or (k[0], p) not in self.blocks)
        return len(self.blocks), roots, max((depth(k) for k in self.blocks), default=0)


def norm(h):
    if isinstance(h, bytes):
        return b"b" + h
    return b"i" + (h % (1 << 64)).to_bytes(8, "big")


def stored_a(hashes, parent, tokens, bs):
    return ["BlockStored", hashes, parent, tokens, bs, None, "GPU"]


def stored_m(hashes, parent, tokens, bs):
    return {"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": parent,
            "token_ids": tokens, "block_size": bs, "lora_id": None, "medium": "GPU",
            "lora_name": None, "extra_keys": [[1, 2]]}


def main():
    cli = sys.argv[1]
    ctx = zmq.Context()
    p0, p1 = Publisher(ctx), Publisher(ctx)
    (pub0, rep0), (pub1, rep1) = p0.endpoints(), p1.endpoints()
    proc = subprocess.Popen([cli, "cache-watch", "--kv-events", pub0, "--replay", rep0,
                             "--kv-events", pub1, "--replay", rep1,
                             "--kv-events-topic", "kv-events", "--seconds", "4", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 3
    while not (p0.joined and p1.joined) and time.time() < deadline:
        p0.service()
        p1.service()
        time.sleep(0.01)
    if not (p0.joined and p1.joined):
        proc.kill()
        print("FAIL: cache-watch never subscribed")
        return 1
    model = Model()
    big = (1 << 64) - 3  # above 2^63, sent unsigned
    b0 = [
        [1.0, [stored_a([big, -5, 7], None, list(range(12)), 4)]],
        [2.0, [stored_a([8], -5, [20, 21, 22, 23], 4), stored_a([9], None, [1, 1, 1, 1], 4)]],
        [3.0, [stored_a([10, 11], 7, list(range(8)), 4)]],  # held back: replayed
        [4.0, [["BlockRemoved", [9], "GPU"], stored_a([12], 11, [5, 5, 5, 5], 4),
               ["FutureEvent", 1, 2]]],
    ]
    b1 = [
        {"ts": 1.0, "events": [stored_m([b"\x01\xff", b"\x02"], None, [1, 2, 3, 4], 2)],
         "data_parallel_rank": 1, "new_field": 3},
        {"ts": 2.0, "events": [{"type": "AllBlocksCleared"}], "data_parallel_rank": 1},
        {"ts": 3.0, "events": [stored_m([b"\x03"], None, [1, 2], 2)], "data_parallel_rank": 1},  # lost
        {"ts": 4.0, "events": [stored_m([b"\x04", b"\x05", b"\x06"], None, [9] * 6, 2)],
         "data_parallel_rank": 1},
        {"ts": 5.0, "events": [{"type": "BlockRemoved", "block_hashes": [b"\x06"]}],
         "data_parallel_rank": 1},
    ]
    steps = []
    for seq, batch in enumerate(b0):
        held = seq == 2
        steps.append((p0, seq, msgpack.packb(batch), not held, True))
        model.apply(0, batch[1])  # all of them: the held one comes by replay
    for seq, batch in enumerate(b1):
        lost = seq == 2
        steps.append((p1, seq, msgpack.packb(batch), not lost, not lost))
        if not lost:
            model.apply(1, batch["events"])
    steps.append((p1, 5, b"\x93\x01\xc1", True, True))  # 0xc1 is never valid msgpack
    # Order: interleave the ranks; rank 0's held message is skipped live.
    order = [steps[0], steps[4], steps[1], steps[5], steps[2], steps[3], steps[6],
             steps[7], steps[8], steps[9]]
    for pub, seq, payload, live, buffered in order:
        pub.send(seq, payload, live, buffered)
        for _ in range(5):
            p0.service()
            p1.service()
            time.sleep(0.01)
    p1.pub.send_multipart([b"kv-events", b"\x00" * 8])  # two frames: malformed
    while proc.poll() is None:
        p0.service()
        p1.service()
        time.sleep(0.01)
    out, err = proc.communicate()
    if proc.returncode != 0:
        print(f"FAIL: cache-watch exited {proc.returncode}: {err.decode()}")
        return 1
    got = json.loads(out)
    blocks, roots, depth = model.shape()
    want = {"blocks": blocks, "roots": roots, "max_depth_blocks": depth,
            "stored_events": model.stored, "removed_events": model.removed,
            "cleared_events": model.cleared, "unknown_events": 1, "seq_gaps": 2,
            "dropped_messages": 1, "replayed_messages": 1, "malformed_messages": 2}
    bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    print("cache-watch:", json.dumps(got))
    if bad:
        print("FAIL: (got, want):", bad)
        return 1
    if rankless_publishers_run(cli, ctx) != 0:
        return 1
    return sigint_text_run(cli, ctx)


def rankless_publishers_run(cli, ctx):
    """Two publishers whose batches name no rank (older servers, one port per
    data-parallel rank) sending the same hashes: each endpoint is its own rank,
    so the two chains stay apart instead of landing on rank 0 together."""
    pubs = [Publisher(ctx), Publisher(ctx)]
    args = [cli, "cache-watch", "--seconds", "1.5"]
    for pub in pubs:
        args += ["--kv-events", pub.endpoints()[0]]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 3
    while not all(p.joined for p in pubs) and time.time() < deadline:
        for p in pubs:
            p.service()
        time.sleep(0.01)
    for r, pub in enumerate(pubs):
        pub.send(0, msgpack.packb([0.0, [stored_a([1, 2], None, [r, r, 5, 5], 2)]]))
    out, err = proc.communicate(timeout=10)
    text = out.decode()
    want = ["rank 0\n  0000000000000001 blocks=2 tokens=4: 0 0 5 5\n",
            "rank 1\n  0000000000000001 blocks=2 tokens=4: 1 1 5 5\n"]
    if proc.returncode != 0 or not all(w in text for w in want):
        print(f"FAIL: rankless run exited {proc.returncode}; stdout:\n{text}stderr: {err.decode()}")
        return 1
    return 0


def sigint_text_run(cli, ctx):
    """Without --seconds, SIGINT ends the watch: exit 0 and the text tree."""
    pub = Publisher(ctx)
    proc = subprocess.Popen([cli, "cache-watch", "--kv-events", pub.endpoints()[0]],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 3
    while not pub.joined and time.time() < deadline:
        pub.service()
        time.sleep(0.01)
    chain = [["BlockStored", [h], None if h == 1 else h - 1, [h], 1] for h in range(1, 5)]
    pub.send(0, msgpack.packb([0.0, chain + [stored_a([9], 2, [7, 8], 2)]]))
    pub.send(2, msgpack.packb([1.0, []]))  # seq 1 lost, no replay socket given
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    want = ("rank 0\n  0000000000000001 blocks=2 tokens=2: 1 2\n"
            "    0000000000000003 blocks=2 tokens=2: 3 4\n"
            "    0000000000000009 blocks=1 tokens=2: 7 8\n")
    lost = "warning: 1 messages lost and not replayed"
    if proc.returncode != 0 or want not in out.decode() or lost not in out.decode():
        print(f"FAIL: SIGINT run exited {proc.returncode}; stdout:\n{out.decode()}stderr: {err.decode()}")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""radixchat-cli and the sealed cache tiers, end to end:

- a second `generate` loads the first one's blocks from the disk tier;
- a block file changed on disk is refused, recomputed and reported in one
  stderr line (it used to be silent);
- `cache-clear --kv-disk DIR` removes every block file, and says how many;
- with a private redis-server: values expire (TTL set), hold no prompt
  token run or word, and `cache-clear --kv-redis URL --kv-redis-tenant T`
  deletes that tenant's values and no other's.

Usage: cli-tiers-test.py RADIXCHAT_CLI
"""
import json
import os
import pathlib
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

CLI = sys.argv[1]
PROMPT = ("The secret password is SWORDFISH and the vault code is 4711. " * 8).strip()


def run(*args, ok=True):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)
    if ok and p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def generate(*tier_args):
    return run("generate", "--prompt", PROMPT, "--max-tokens", "4", "--threads", "2", *tier_args)


def block_files(folder):
    return sorted(pathlib.Path(folder).rglob("*.rckv"))


def prompt_ids():
    out = run("tokenize", "--text", PROMPT, "--add-bos").stdout
    return json.loads(out)


def no_plaintext(blob, ids, where):
    for i in range(len(ids) - 3):
        run4 = struct.pack("<4i", *ids[i:i + 4])
        if run4 in blob:
            sys.exit(f"FAIL: token ids {i}..{i + 3} in the clear in {where}")
    for word in (b"SWORDFISH", b"password", b"4711"):
        if word in blob:
            sys.exit(f"FAIL: {word!r} in the clear in {where}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_cli(port, *args):
    p = subprocess.run(["redis-cli", "-p", str(port), "--no-auth-warning", "-a", "pw", *args],
                       capture_output=True, timeout=30)
    return p.stdout


def check_disk(tmp):
    kv = os.path.join(tmp, "kv")
    key = ["--kv-disk-key-file", os.path.join(tmp, "disk.key")]
    generate("--kv-disk", kv, *key)
    files = block_files(kv)
    if len(files) < 2:
        sys.exit(f"FAIL: expected blocks on disk, found {len(files)}")
    ids = prompt_ids()
    for f in files:
        no_plaintext(f.read_bytes(), ids, f.name)
    second = generate("--kv-disk", kv, *key)
    if "loaded from the tiers" not in second.stderr:
        sys.exit(f"FAIL: the second run loaded nothing: {second.stderr}")
    # A changed byte: refused, recomputed, and said.
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0x20
    files[0].write_bytes(bytes(data))
    third = generate("--kv-disk", kv, *key)
    if "the disk tier refused" not in third.stderr:
        sys.exit(f"FAIL: a refused block was silent: {third.stderr}")
    cleared = run("cache-clear", "--kv-disk", kv)
    if "blocks removed" not in cleared.stdout or block_files(kv):
        sys.exit(f"FAIL: cache-clear left {len(block_files(kv))} blocks: {cleared.stdout}")
    bad = run("cache-clear", ok=False)
    if bad.returncode == 0 or "needs --kv-disk" not in bad.stderr:
        sys.exit(f"FAIL: cache-clear without a tier: {bad.returncode} {bad.stderr}")


def check_redis(tmp):
    if shutil.which("redis-server") is None:
        if os.environ.get("RADIXCHAT_TESTS_MUST_RUN"):
            sys.exit("FAIL: redis-server is not installed (RADIXCHAT_TESTS_MUST_RUN is set)")
        print("redis-server is not installed: Redis part skipped")
        return
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--requirepass", "pw", "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if redis_cli(port, "ping").strip() == b"PONG":
                break
            time.sleep(0.05)
        url = f"redis://:pw@127.0.0.1:{port}"
        key = ["--kv-redis-key-file", os.path.join(tmp, "redis.key")]
        generate("--kv-redis", url, "--kv-redis-tenant", "alpha", "--kv-redis-ttl", "3600", *key)
        generate("--kv-redis", url, "--kv-redis-tenant", "beta", *key)
        alpha = redis_cli(port, "--raw", "keys", "rc:kv:alpha:*").split()
        beta = redis_cli(port, "--raw", "keys", "rc:kv:beta:*").split()
        if not alpha or not beta:
            sys.exit(f"FAIL: no Redis values written ({len(alpha)}, {len(beta)})")
        ttl = int(redis_cli(port, "ttl", alpha[0]).strip())
        if not 3500 < ttl <= 3600:
            sys.exit(f"FAIL: TTL {ttl}, expected about 3600")
        default_ttl = int(redis_cli(port, "ttl", beta[0]).strip())
        if default_ttl <= 0:
            sys.exit(f"FAIL: values without --kv-redis-ttl never expire ({default_ttl})")
        ids = prompt_ids()
        for k in alpha:
            no_plaintext(redis_cli(port, "--raw", "get", k), ids, k.decode())
        cleared = run("cache-clear", "--kv-redis", url, "--kv-redis-tenant", "alpha")
        if f"{len(alpha)} blocks removed" not in cleared.stdout:
            sys.exit(f"FAIL: cache-clear --kv-redis said: {cleared.stdout}")
        if redis_cli(port, "--raw", "keys", "rc:kv:alpha:*").split():
            sys.exit("FAIL: tenant alpha still has values")
        if len(redis_cli(port, "--raw", "keys", "rc:kv:beta:*").split()) != len(beta):
            sys.exit("FAIL: clearing alpha touched beta")
    finally:
        server.kill()
        server.wait()


with tempfile.TemporaryDirectory() as tmp:
    check_disk(tmp)
    check_redis(tmp)
print("1 passed, 0 failed")

#!/usr/bin/env python3
"""serve --kv-events on all interfaces with CURVE, watched by cache-watch.

kv-events-keygen makes two key pairs under umask 022 (the secret file must
be 0600, the command refuses to overwrite it). serve publishes on
tcp://0.0.0.0:PORT with --kv-events-curve-secret (allowed without
--kv-events-allow-remote because of CURVE). Three cache-watch processes
follow it for 6 s while chats run: with the server's .pub file, with the
other pair's .pub, and plain. Only the first may see any message; the other
two must report none. The first also records what it saw with --redact:
the file is 0600 and every token id in it is a hash (>= 2^30).

Usage: curve-serve-test.py RADIXCHAT_CLI. Ports 24540-24549.
"""
import json
import os
import signal
import sqlite3
import stat
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

CLI = sys.argv[1]
PORT = 24541


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def keygen(path):
    r = subprocess.run([CLI, "kv-events-keygen", "--out", path], capture_output=True, text=True)
    check(r.returncode == 0, f"kv-events-keygen: {r.stderr}")
    return r.stdout.strip()


def main():
    os.umask(0o022)
    with tempfile.TemporaryDirectory() as tmp:
        key, other = os.path.join(tmp, "kv.key"), os.path.join(tmp, "other.key")
        public = keygen(key)
        keygen(other)
        check(len(public) == 40, f"public key {public!r}")
        check(stat.S_IMODE(os.stat(key).st_mode) == 0o600, "secret key file is not 0600")
        with open(key + ".pub") as f:
            check(f"public-key = {public}" in f.read(), "the .pub file lacks the public key")
        again = subprocess.run([CLI, "kv-events-keygen", "--out", key], capture_output=True,
                               text=True)
        check(again.returncode == 1 and "already exists" in again.stderr,
              f"keygen overwrote a key file: {again.stderr}")

        serve = subprocess.Popen(
            [CLI, "serve", "--port", "0", "--threads", "1",
             "--kv-events", f"tcp://0.0.0.0:{PORT}", "--kv-events-curve-secret", key],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watchers = {}
        try:
            line = serve.stdout.readline()
            check(line.startswith("listening on http://127.0.0.1:"), f"serve said {line!r} "
                  f"{serve.stderr.read() if serve.poll() is not None else ''}")
            base = line.split()[-1]
            endpoint = f"tcp://127.0.0.1:{PORT}"
            watch_rec = os.path.join(tmp, "watch.db")
            for name, extra in (("right", ["--kv-events-curve-server-key", key + ".pub",
                                           "--record", watch_rec, "--redact"]),
                                ("wrong", ["--kv-events-curve-server-key", other + ".pub"]),
                                ("plain", [])):
                watchers[name] = subprocess.Popen(
                    [CLI, "cache-watch", "--kv-events", endpoint, "--seconds", "6", "--json"]
                    + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)  # subscriptions join before anything is published
            for q in ("what is a radix tree", "what is a radix sort", "hello there"):
                body = json.dumps({"messages": [
                    {"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": q}], "max_tokens": 4}).encode()
                req = urllib.request.Request(base + "/chat/completions", body,
                                             {"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=60) as r:
                    check(r.status == 200, "chat request failed")
            seen = {}
            for name, p in watchers.items():
                out, err = p.communicate(timeout=30)
                check(p.returncode == 0, f"cache-watch ({name}) exited {p.returncode}: {err}")
                seen[name] = json.loads(out)
        finally:
            for p in watchers.values():
                if p.poll() is None:
                    p.kill()
            serve.send_signal(signal.SIGINT)
            try:
                serve.wait(timeout=30)
            except subprocess.TimeoutExpired:
                serve.kill()
        check(seen["right"]["messages"] > 0 and seen["right"]["blocks"] > 0,
              f"the key holder saw nothing: {seen['right']}")
        check(seen["wrong"]["messages"] == 0, f"a wrong key received events: {seen['wrong']}")
        check(seen["plain"]["messages"] == 0, f"a plain subscriber received events: {seen['plain']}")
        # What it watched, recorded redacted and owner-only.
        check(stat.S_IMODE(os.stat(watch_rec).st_mode) == 0o600, "the recording is not 0600")
        db = sqlite3.connect(watch_rec)
        meta = dict(db.execute("SELECT key, value FROM meta"))
        check(meta.get("redacted") == "salted-hash-v1", f"not redacted: {meta}")
        blobs = [b for (b,) in db.execute("SELECT tokens FROM events WHERE tokens IS NOT NULL")]
        check(blobs, "no insert events recorded")
        for b in blobs:
            ids = struct.unpack(f"<{len(b) // 4}i", b)
            check(all(i >= 1 << 30 for i in ids), "a recorded token id is not hashed")
        db.close()
        print("ok:", {k: v["messages"] for k, v in seen.items()})


main()

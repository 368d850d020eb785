#!/usr/bin/python3
"""Where `serve` takes the Redis tier's password from.

A private redis-server with a password (loopback). The tier must be up
(/v1/models) when the password comes from RADIXCHAT_REDIS_PASSWORD, and
from --kv-redis-password-file; a password in the redis:// URL still works
but `serve` warns on stderr that ps shows it; without any password the
tier is refused with one clear error. Exit 77 (skip) without redis-server.
Usage: redis-password-test.py RADIXCHAT_CLI MODEL
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import Serve, report  # noqa: E402

PASSWORD = "rc-password-test-pw"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_state(srv):
    _, _, body = srv.request("GET", "/v1/models")
    for t in json.loads(body)["data"][0]["cache_tiers"]:
        if t["name"] == "redis":
            return t["state"]
    return None


def main():
    cli, model = sys.argv[1], sys.argv[2]
    if not shutil.which("redis-server"):
        print("no redis-server; skipping")
        return 77
    port = free_port()
    redis = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--requirepass", PASSWORD,
         "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failures = []
    os.environ.pop("RADIXCHAT_REDIS_PASSWORD", None)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        url = "redis://127.0.0.1:%d" % port
        folder = tempfile.mkdtemp()
        pw_file = os.path.join(folder, "redis-password")
        with open(pw_file, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(pw_file, 0o600)
        cases = [
            ("RADIXCHAT_REDIS_PASSWORD", [url], {"RADIXCHAT_REDIS_PASSWORD": PASSWORD}, False),
            ("--kv-redis-password-file", [url, "--kv-redis-password-file", pw_file], {}, False),
            ("password in the URL", ["redis://:%s@127.0.0.1:%d" % (PASSWORD, port)], {}, True),
        ]
        for name, args, extra, warns in cases:
            srv = Serve(cli, model, "--kv-redis", *args, env=extra)
            try:
                state = redis_state(srv)
            finally:
                srv.stop()
            err = srv.proc.stderr.read()
            warned = "visible to other users in ps" in err
            print("%s: tier %s, warning %s" % (name, state, warned))
            if state != "up":
                failures.append("%s: the tier is %s, not up" % (name, state))
            if warned != warns:
                failures.append("%s: warning printed: %s, expected %s" % (name, warned, warns))
            if PASSWORD in err:
                failures.append("%s: stderr shows the password" % name)
        no_pw = subprocess.run([cli, "serve", "--port", "0", "--threads", "1", "--model", model,
                                "--kv-redis", url], capture_output=True, text=True, timeout=120)
        print("no password: exit %d: %s" % (no_pw.returncode, no_pw.stderr.strip()[-200:]))
        if no_pw.returncode == 0 or "listening on" in no_pw.stdout:
            failures.append("without a password serve started")
        shutil.rmtree(folder)
    finally:
        redis.kill()
        redis.wait()
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())

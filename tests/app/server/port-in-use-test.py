#!/usr/bin/python3
"""Every listener of `serve` refuses a port that is already in use.

Starts one `radixchat-cli serve` holding an HTTP port, a KV-events port and
a replay port, then starts a second `serve` on each of those ports in turn.
Each second server must exit with status 1 and one stderr line saying
"Address already in use" and naming the port, while the first keeps
answering, with a listen backlog of 512. Usage: port-in-use-test.py RADIXCHAT_CLI MODEL BASE_PORT
"""
import socket
import subprocess
import sys
import time
import urllib.request


def free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def main():
    cli, model, base = sys.argv[1], sys.argv[2], int(sys.argv[3])
    http, kv, replay, spare = base, base + 1, base + 2, base + 3
    for p in (http, kv, replay, spare):
        if not free(p):
            print("port %d is taken by something else; cannot run" % p)
            return 77
    common = ["serve", "--model", model, "--threads", "1"]
    first = subprocess.Popen(
        [cli] + common + ["--port", str(http), "--kv-events", "tcp://127.0.0.1:%d" % kv,
                          "--kv-events-replay", "tcp://127.0.0.1:%d" % replay],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    failures = []
    try:
        line = first.stdout.readline()
        if ("127.0.0.1:%d" % http) not in line:
            print("FAIL: the first server did not start: %r" % line)
            return 1
        cases = [
            ("HTTP port", ["--port", str(http)], str(http)),
            ("KV-events port", ["--port", str(spare), "--kv-events", "tcp://127.0.0.1:%d" % kv],
             str(kv)),
            ("replay port", ["--port", str(spare), "--kv-events", "tcp://127.0.0.1:0",
                             "--kv-events-replay", "tcp://127.0.0.1:%d" % replay], str(replay)),
        ]
        for name, args, port in cases:
            t0 = time.monotonic()
            second = subprocess.run([cli] + common + args, capture_output=True, text=True,
                                    timeout=60)
            lines = second.stderr.strip().splitlines()
            bad = []
            if second.returncode != 1:
                bad.append("exit status %d, not 1" % second.returncode)
            if "listening on" in second.stdout:
                bad.append("it said it was listening")
            last = lines[-1] if lines else ""
            if "Address already in use" not in last or port not in last:
                bad.append("last stderr line lacks 'Address already in use' and the port")
            if sum("radixchat-cli: " in l and "serving" not in l for l in lines) != 1:
                bad.append("not exactly one error line")
            status = "ok" if not bad else "FAIL (" + "; ".join(bad) + ")"
            print("%s in use: %s in %.1f s: %s" % (name, status, time.monotonic() - t0, last))
            if bad:
                failures.append(name)
        # The listen backlog (ss's Send-Q for a listening socket): 512, not
        # the HTTP library's 5, which overflows under a burst of connections.
        try:
            ss = subprocess.run(["ss", "-ltnH", "sport = :%d" % http], capture_output=True,
                                text=True, timeout=10).stdout.split()
            backlog = int(ss[2]) if len(ss) > 2 else None
            print("listen backlog: %s" % backlog)
            if backlog != 512:
                failures.append("listen backlog %s, not 512" % backlog)
        except FileNotFoundError:
            print("ss not installed: listen backlog not checked")
        for _ in range(8):
            with urllib.request.urlopen("http://127.0.0.1:%d/v1/models" % http, timeout=10) as r:
                if r.status != 200:
                    failures.append("first server stopped answering")
                    break
    finally:
        first.terminate()
        try:
            first.wait(timeout=30)
        except subprocess.TimeoutExpired:
            first.kill()
            first.wait()
    print("PASS" if not failures else "FAIL: " + ", ".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())

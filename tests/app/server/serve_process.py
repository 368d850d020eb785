"""One `radixchat-cli serve` process for the Python server tests.

Serve(cli, model, *flags, env=None) starts it on a free loopback port and
waits for its "listening on" line; request() sends one HTTP request and
returns (status, headers, body); rss_kib() reads the process's resident
size from /proc; stop() sends SIGTERM and returns the seconds it took to
exit; report() prints the failures and gives the exit status. Raises
RuntimeError when the server does not start.
"""
import http.client
import os
import re
import signal
import subprocess
import time


class Serve:
    def __init__(self, cli, model, *flags, env=None):
        self.proc = subprocess.Popen(
            [cli, "serve", "--model", model, "--port", "0", "--threads", "1", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, **(env or {})))
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
        if not m:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            raise RuntimeError("serve did not start: %r %s" % (line, self.proc.stderr.read()))
        self.port = int(m.group(1))

    def request(self, method, path, body=None, headers=None, timeout=60, source="127.0.0.1"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout,
                                          source_address=(source, 0))
        try:
            conn.request(method, path, body, headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read().decode(errors="replace")
        finally:
            conn.close()

    def timed(self, method, path, body=None, headers=None, timeout=60):
        """(status, body, seconds) of one request."""
        t0 = time.monotonic()
        status, _, text = self.request(method, path, body, headers, timeout)
        return status, text, time.monotonic() - t0

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def stop(self, timeout=30):
        """SIGTERM; the seconds until the process exited."""
        if self.proc.poll() is not None:
            return 0.0
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return time.monotonic() - t0


def report(failures):
    """Prints each failure; the test's exit status."""
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0

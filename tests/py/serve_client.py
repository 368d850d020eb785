"""What the Python test scripts need to drive a local server: starting and
stopping `radixchat-cli serve`, a free loopback port, a JSON POST and seeded
prompt text.

A script in tests/<area>/<folder>/ imports it with
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "py"))
    from serve_client import free_port, post, start_serve, stop_serve, text
Standard library only, so Debian's python3 runs every script.
"""
import http.client
import json
import re
import socket
import subprocess
import time
import urllib.request

WORDS = ("cache tree prefix token page node branch memory request reply model "
         "vector matrix layer system prompt answer question window thread").split()


def text(n_words, seed):
    """n_words words from WORDS, the same for the same seed (a linear
    congruential generator, so no script depends on `random`'s algorithm)."""
    x, out = seed, []
    for _ in range(n_words):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append(WORDS[x % len(WORDS)])
    return " ".join(out)


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (for endpoints a
    program is told to bind; `serve --port 0` picks its own)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body, timeout=120):
    """POSTs body as JSON and returns the decoded JSON reply; an HTTP error
    raises urllib.error.HTTPError."""
    req = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def stream_ttft(port, body, timeout=600):
    """Streams a chat completion of `body` (stream and include_usage set
    here) and returns (seconds to the first content chunk, the reply's
    usage)."""
    body = dict(body, stream=True, stream_options={"include_usage": True})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    t0 = time.monotonic()
    conn.request("POST", "/v1/chat/completions", json.dumps(body),
                 {"Content-Type": "application/json"})
    first, usage = None, None
    for raw in conn.getresponse():
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if first is None and chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
            first = time.monotonic() - t0
        if chunk.get("usage"):
            usage = chunk["usage"]
    conn.close()
    return first, usage


def tier_writes_done(port):
    """True once the server's tier write queue is empty (its /metrics)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/metrics")
    body = conn.getresponse().read().decode()
    conn.close()
    m = re.search(r"^radixchat_tier_write_queue_bytes (\S+)$", body, re.M)
    return m is not None and float(m.group(1)) == 0


def start_serve(cli, *args, stderr=subprocess.DEVNULL):
    """Starts `CLI serve --port 0 ARGS...` and waits for its first line,
    "listening on http://127.0.0.1:PORT/v1"; returns (process, PORT). A
    server that exits instead raises RuntimeError with that line and, with
    stderr=subprocess.PIPE, what it printed there (left unread otherwise, so
    a long run cannot fill the pipe)."""
    proc = subprocess.Popen([cli, "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=stderr, text=True)
    line = proc.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
    if not m:
        try:
            proc.wait(timeout=30)  # stdout closed: the process is exiting
        except subprocess.TimeoutExpired:
            pass
        err = proc.stderr.read() if proc.stderr and proc.poll() is not None else ""
        stop_serve(proc)
        raise RuntimeError("serve did not start: " + line + err)
    return proc, int(m.group(1))


def stop_serve(proc, timeout=30):
    """SIGTERM (serve's graceful stop), then SIGKILL if it has not exited
    within timeout seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

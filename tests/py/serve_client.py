"""What the Python test scripts need to drive a local server: a free
loopback port, a JSON POST and seeded prompt text.

A script in tests/<area>/<folder>/ imports it with
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "py"))
    from serve_client import free_port, post, text
Standard library only, so Debian's python3 runs every script.
"""
import json
import socket
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

#!/usr/bin/python3
"""Browser origins against `radixchat-cli serve --allow-origin`.

  - Origin: http://evil.example is refused with 403 on every route,
    including the cross-site text/plain POST a page can send without a
    preflight, and its preflight (OPTIONS) too;
  - the allowed origin's preflight gets 204 with the methods and headers
    a browser needs, and its requests answer 200 with
    Access-Control-Allow-Origin naming it;
  - a request without Origin (curl, SDKs) is served as before.
Usage: origin-test.py RADIXCHAT_CLI MODEL
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import Serve, report  # noqa: E402

GOOD = "http://good.example:3000"
EVIL = "http://evil.example"


def main():
    cli, model = sys.argv[1], sys.argv[2]
    failures = []

    def expect(what, got, want):
        print("%s: %s" % (what, got))
        if got != want:
            failures.append("%s: got %r, want %r" % (what, got, want))

    chat = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
    srv = Serve(cli, model, "--allow-origin", GOOD, "--allow-origin", "https://other.example")
    try:
        for path in ("/health", "/v1/models", "/metrics"):
            status, _, _ = srv.request("GET", path, headers={"Origin": EVIL})
            expect("GET %s from evil" % path, status, 403)
        status, _, text = srv.request("POST", "/v1/chat/completions", chat,
                                      {"Origin": EVIL, "Content-Type": "text/plain"})
        expect("text/plain POST from evil", status, 403)
        if "origin" not in text.lower():
            failures.append("the 403 does not say it is about the origin: " + text[:200])
        status, headers, _ = srv.request("OPTIONS", "/v1/chat/completions", headers={
            "Origin": EVIL, "Access-Control-Request-Method": "POST"})
        expect("preflight from evil", status, 403)
        expect("preflight from evil allows the origin", headers.get("Access-Control-Allow-Origin"),
               None)

        status, headers, _ = srv.request("OPTIONS", "/v1/chat/completions", headers={
            "Origin": GOOD, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        expect("preflight from the allowed origin", status, 204)
        expect("preflight Allow-Origin", headers.get("Access-Control-Allow-Origin"), GOOD)
        allowed = headers.get("Access-Control-Allow-Headers", "").lower()
        expect("preflight allows Content-Type and Authorization",
               "content-type" in allowed and "authorization" in allowed, True)
        expect("preflight allows POST", "POST" in headers.get("Access-Control-Allow-Methods", ""),
               True)
        status, headers, _ = srv.request("POST", "/v1/chat/completions", chat,
                                         {"Origin": GOOD, "Content-Type": "application/json"})
        expect("POST from the allowed origin", status, 200)
        expect("its Allow-Origin", headers.get("Access-Control-Allow-Origin"), GOOD)
        status, _, _ = srv.request("GET", "/v1/models", headers={"Origin": "https://other.example"})
        expect("GET from the second allowed origin", status, 200)
        status, _, _ = srv.request("POST", "/v1/chat/completions", chat,
                                   {"Content-Type": "application/json"})
        expect("POST without Origin", status, 200)
    finally:
        srv.stop()

    # Without --allow-origin no page may call the server.
    srv = Serve(cli, model)
    try:
        status, _, _ = srv.request("POST", "/v1/chat/completions", chat,
                                   {"Origin": GOOD, "Content-Type": "text/plain"})
        expect("any Origin without --allow-origin", status, 403)
    finally:
        srv.stop()
    return report(failures)


if __name__ == "__main__":
    sys.exit(main())

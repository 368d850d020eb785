#!/usr/bin/env bash
# device-checks.sh: everything the CUDA backend must pass on a machine with an NVIDIA GPU,
# in one run of at most 8 minutes:
#   1. configure a fresh Release build for this GPU's architecture only
#      (RADIXCHAT_CUDA=ON, no GUI) and build just what the checks need;
#   2. run the `gpu` tests (ctest -L gpu): every CUDA op against the CPU
#      reference, golden logits and cached-vs-uncached on the GPU;
#   3. gpu-bench on random-weight ~1B-parameter models (F16 and Q4_K, made
#      here with make-random-gguf): decode tok/s at batch 1 and 32, prefill
#      tok/s at 2048 tokens, against the bandwidth and fp16 peak measured in
#      the same run;
#   4. radixchat-cli bench --workload multi-turn --compare --backend cuda.
# Everything goes to stdout; with $OUT set, logs and JSON are copied there.
#
#   tests/gpu/device-checks.sh            # from anywhere in the repository
#   BUILD_DIR=... WORK=... JOBS=... CUDA_ARCH=... LAYERS=... KEEP_BUILD=1
#   BUDGET_S=... TIME_SCALE=...           # optional overrides (dry runs)
#
# Exit status: 0 when the gpu tests passed and every step ran; 1 otherwise
# (the summary at the end says which step failed).
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build-device-checks}"
WORK="${WORK:-${TMPDIR:-/tmp}/rc-device-checks}"
JOBS="${JOBS:-$(nproc)}"
BUDGET_S="${BUDGET_S:-480}"
TIME_SCALE="${TIME_SCALE:-1}"  # multiplies every step's limit (dry runs on slow machines)
START=$SECONDS
RESULTS="$WORK/results"
mkdir -p "$WORK" "$RESULTS"
declare -a SUMMARY=()
STATUS=0

log() { printf '\n=== [%4ds] %s\n' "$((SECONDS - START))" "$*"; }
left() { echo $((BUDGET_S - (SECONDS - START))); }
note() { SUMMARY+=("$1"); }
fail() { note "FAILED: $1"; STATUS=1; }
# run_step NAME SECONDS CMD...: runs CMD under a timeout capped by the budget,
# tee-ing its output to $RESULTS/NAME.log.
run_step() {
  local name="$1" limit=$(($2 * TIME_SCALE))
  shift 2
  local budget
  budget=$(left)
  ((limit > budget)) && limit=$budget
  if ((limit < 5)); then
    fail "$name: no time left in the 8-minute budget"
    return 1
  fi
  timeout --signal=TERM --kill-after=10 "$limit" "$@" 2>&1 | tee "$RESULTS/$name.log"
  local rc=${PIPESTATUS[0]}
  if ((rc == 124)); then
    fail "$name: timed out after ${limit}s"
  elif ((rc != 0)); then
    fail "$name: exit status $rc"
  else
    note "ok: $name"
  fi
  return "$rc"
}

finish() {
  log "summary ($((SECONDS - START)) s)"
  printf '  %s\n' "${SUMMARY[@]}"
  if [[ -n "${OUT:-}" ]]; then
    mkdir -p "$OUT"
    cp -r "$RESULTS"/. "$OUT"/ 2>/dev/null
    printf '%s\n' "${SUMMARY[@]}" >"$OUT/summary.txt"
    echo "  results copied to $OUT"
  fi
  exit "$STATUS"
}

# ---- 0. the device -----------------------------------------------------------
log "device"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi >"$RESULTS/nvidia-smi.txt" 2>&1; then
  cat "$RESULTS/nvidia-smi.txt" 2>/dev/null
  fail "nvidia-smi: no NVIDIA driver or GPU answers; nothing to check"
  finish
fi
cat "$RESULTS/nvidia-smi.txt"
CAP="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
ARCH="${CUDA_ARCH:-${CAP:-native}}"
[[ "$ARCH" =~ ^[0-9]+$ ]] || ARCH=native
echo "building for CUDA architecture: $ARCH"
NVCC="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
[[ -x "$NVCC" ]] || NVCC="$(command -v nvcc || true)"
[[ -n "$NVCC" ]] && "$NVCC" --version | tail -2

# ---- 1. configure and build --------------------------------------------------
log "configure $BUILD_DIR (fresh unless KEEP_BUILD=1)"
[[ "${KEEP_BUILD:-0}" == 1 ]] || rm -rf "$BUILD_DIR"
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
run_step configure 120 cmake -S "$REPO" -B "$BUILD_DIR" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DRADIXCHAT_GUI=OFF -DRADIXCHAT_CUDA=ON -DRADIXCHAT_CUDA_ARCHS="$ARCH" \
  ${NVCC:+-DCMAKE_CUDA_COMPILER="$NVCC"} || finish

# make-random-gguf first: the 1B models are written while the rest builds and the tests run.
log "build make-random-gguf"
run_step build-tools 200 cmake --build "$BUILD_DIR" -j "$JOBS" --target make-random-gguf || finish
# ~1.1B parameters (TinyLlama's shape); LAYERS=2 makes a quick dry run.
MODEL_ARGS=(--arch llama --dim 2048 --layers "${LAYERS:-22}" --heads 32 --kv-heads 4 --ffn 5632
  --vocab 32000 --ctx 4096 --seed 1)
declare -A GEN_PID=()
for t in f16 q4_k; do
  if [[ -s "$WORK/random-1b-$t.gguf" && -z "${LAYERS:-}" ]]; then
    echo "reusing $WORK/random-1b-$t.gguf"
  else
    (timeout $((300 * TIME_SCALE)) "$BUILD_DIR/tests/tools/make-random-gguf" "${MODEL_ARGS[@]}" --type "$t" \
      --out "$WORK/random-1b-$t.gguf.part" && mv "$WORK/random-1b-$t.gguf.part" "$WORK/random-1b-$t.gguf") \
      >"$RESULTS/make-random-gguf-$t.log" 2>&1 &
    GEN_PID[$t]=$!
  fi
done

log "build test_gpu, gpu-bench, radixchat-cli"
run_step build 240 cmake --build "$BUILD_DIR" -j "$JOBS" --target test_gpu test_gpu_plumbing \
  gpu-bench radixchat-cli || finish

# ---- 2. gpu tests ------------------------------------------------------------
log "ctest -L gpu"
run_step ctest-gpu 200 ctest --test-dir "$BUILD_DIR" -L gpu -j 8 --timeout 300 --output-on-failure
cp "$BUILD_DIR/Testing/Temporary/LastTest.log" "$RESULTS/ctest-LastTest.log" 2>/dev/null
if grep -q "tests did not run" "$RESULTS/ctest-gpu.log" 2>/dev/null; then
  fail "ctest-gpu: some gpu tests were skipped on a machine with a GPU (see the log)"
fi
run_step gpu-plumbing 60 "$BUILD_DIR/tests/gpu/test_gpu_plumbing" --gtest_brief=1

# ---- 3. gpu-bench ------------------------------------------------------------
log "waiting for the random 1B models"
for t in "${!GEN_PID[@]}"; do
  if ! wait "${GEN_PID[$t]}"; then
    cat "$RESULTS/make-random-gguf-$t.log"
    fail "make-random-gguf --type $t"
  fi
done
BENCH_MODELS=()
for t in f16 q4_k; do
  [[ -s "$WORK/random-1b-$t.gguf" ]] && BENCH_MODELS+=(--model "$WORK/random-1b-$t.gguf")
done
ls -la "$WORK"/*.gguf 2>/dev/null
if ((${#BENCH_MODELS[@]} > 0)); then
  log "gpu-bench"
  run_step gpu-bench 150 "$BUILD_DIR/tests/gpu/gpu-bench" "${BENCH_MODELS[@]}" --prefill 2048 \
    --context 512 --steps 64 --batch 1 --batch 32 --json "$RESULTS/gpu-bench.json"
fi

# ---- 4. the multi-turn workload on the GPU -----------------------------------
log "radixchat-cli bench --workload multi-turn --compare --backend cuda"
run_step cli-bench 90 "$BUILD_DIR/app/radixchat-cli" bench --workload multi-turn --compare \
  --backend cuda
run_step cli-info 30 "$BUILD_DIR/app/radixchat-cli" info --backend cuda
grep -q "backend: cuda" "$RESULTS/cli-info.log" ||
  fail "cli-info: the engine did not run on CUDA (the bench above ran on the CPU); see its reason"

finish

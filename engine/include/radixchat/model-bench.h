// Prefill and decode speed of the CPU runtime on one GGUF model, like
// llama-bench's pp/tg, with the decode roofline measured in the same run
// (radixchat-cli model-bench; docs/architecture.md section 18).
//
// Prefill runs one sequence of `prompt_tokens` random tokens in chunks of
// up to 512; decode then generates `decode_tokens` greedy tokens one at a
// time after it. After an untimed warm-up run (16 prompt tokens, 4 decoded)
// the whole run is repeated `repeats` times and the best (highest tokens/s)
// prefill and decode are reported. Bytes per decoded token = every matmul weight (the output
// projection included, the embedding table only when tied to it) + the K/V
// that attention reads at the mean decode position. The roofline comes
// from `repeats` more runs in which every decoded token is followed by one
// read of all matmul weights by the probe of kernels/cpu/read-bandwidth.h
// (the model's own weights read by a thread pool of the same size): decode
// and probe are timed over the same moments. The probe is its fastest read
// (the least disturbed, as the best decode run is) and decode there the
// best run's rate, so the wall is as high as this machine showed it and
// decode cannot honestly beat it by more than noise; decode_fraction > 1
// means the probe under-read and is reported, not hidden.
#pragma once

#include <cstdint>
#include <string>

#include "radixchat/engine-config.h"
#include "radixchat/status.h"

namespace rc {

struct ModelBenchConfig {
  std::string model_path;  // empty: the bundled model
  int n_threads = 1;       // >= 1
  int prompt_tokens = 512;
  int decode_tokens = 64;
  KvType kv_type = KvType::f16;
  int repeats = 3;              // timed runs after the warm-up; the best is kept
};

struct ModelBenchResult {
  std::string model;  // file name
  std::string type;   // storage type of the first layer's attn_q ("Q4_K")
  int threads = 0;
  int prompt_tokens = 0;
  int decode_tokens = 0;
  int repeats = 0;  // timed runs; the tok/s figures are their best
  double prefill_tok_s = 0;
  double decode_tok_s = 0;
  int64_t weight_bytes = 0;    // every bound tensor
  // What decode and the probe read: "copy" (the CPU backend's copy of the
  // weights, in memory that asks for huge pages) or "mapping" (the file).
  std::string weights;
  double bytes_per_token = 0;  // read by one decode step (see above)
  // The roofline runs (decode alternating with the probe):
  double interleaved_decode_tok_s = 0;  // decode there (the best run's tokens / time)
  double bandwidth_gbs = 0;             // the probe there, GB/s (its fastest read)
  double roofline_tok_s = 0;            // bandwidth / bytes_per_token
  double decode_fraction = 0;           // interleaved_decode_tok_s / roofline_tok_s
  double decode_gbs = 0;                // bytes_per_token * interleaved_decode_tok_s / 1e9
};

// Runs on the CPU backend with n_threads threads. Errors: a model that does
// not load, sizes or repeats < 1.
Result<ModelBenchResult> bench_model(const ModelBenchConfig& config);

}  // namespace rc

#include "radixchat/model-bench.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <random>
#include <vector>

#include "cpu/cpu-backends.h"
#include "cpu/read-bandwidth.h"
#include "model/default-model.h"
#include "model/model-file.h"
#include "runtime/kv-type.h"
#include "runtime/model-runner.h"

namespace rc {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The weights one decode step streams: every matmul weight and the output
// projection (the embedding gather reads one row only, unless it is tied).
std::vector<kernels::ByteRegion> matmul_regions(const model::ModelWeights& w) {
  std::vector<kernels::ByteRegion> out;
  auto add = [&](const kernels::Weight& x) {
    if (x.data) out.push_back({x.data, size_t(x.rows * kernels::row_bytes(x.type, x.cols))});
  };
  add(w.output);
  for (const model::LayerWeights& l : w.layers) {
    for (const kernels::Weight* x :
         {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
      add(*x);
    }
  }
  return out;
}

}  // namespace

Result<ModelBenchResult> bench_model(const ModelBenchConfig& config) {
  if (config.n_threads < 1 || config.prompt_tokens < 1 || config.decode_tokens < 1 ||
      config.repeats < 1) {
    return Status(StatusCode::invalid_argument,
                  "threads, prompt, decode and repeats must be at least 1");
  }
  const std::string path =
      config.model_path.empty() ? model::default_model_path() : config.model_path;
  auto model = model::load_model(path);
  if (!model.ok()) return model.status();
  const model::ModelFile& mf = *model.value();
  const model::ModelConfig& c = mf.config;
  const int prompt = config.prompt_tokens, decode = config.decode_tokens;
  if (prompt + decode > c.n_ctx_train) {
    return Status(
        StatusCode::invalid_argument,
        "prompt + decode tokens exceed the model's context of " + std::to_string(c.n_ctx_train));
  }

  auto backend = kernels::make_cpu_backend(config.n_threads);
  const int page_size = 16;
  const int64_t pages = (prompt + decode + page_size - 1) / page_size;
  const kernels::KvPoolShape shape{c.n_layers, c.n_kv_heads, c.head_dim,
                                   page_size,  pages,        runtime::kv_dtype(config.kv_type)};
  auto pool = backend->make_kv_pool(shape);
  if (!pool) return Status(StatusCode::internal, "out of memory for the KV pool");
  const int chunk = std::min(prompt, 512);
  auto runner = runtime::ModelRunner::create(mf, *backend, *pool, chunk, 1);
  if (!runner.ok()) return runner.status();

  std::vector<int32_t> table(size_t(pages), 0);
  for (int64_t i = 0; i < pages; ++i) table[size_t(i)] = int32_t(i);
  std::mt19937 rng(1);
  std::vector<int32_t> tokens(static_cast<size_t>(prompt));
  for (int32_t& t : tokens) t = int32_t(rng() % uint32_t(c.n_vocab));

  ModelBenchResult r;
  r.model = std::filesystem::path(path).filename().string();
  r.type = kernels::dtype_name(mf.weights.layers.front().attn_q.type);
  r.threads = config.n_threads;
  r.prompt_tokens = prompt;
  r.decode_tokens = decode;
  r.weight_bytes = int64_t(mf.weights.total_bytes);
  r.weights = runner.value()->weights_copied() ? "copy" : "mapping";

  std::vector<float> logits;
  runtime::ForwardBatch batch;
  // One run: prefill the prompt at position 0, then decode greedily after
  // it; each run overwrites the same KV pages. Returns the two durations;
  // `between` (when set) runs after every decoded token, outside decode's
  // time.
  auto run_once = [&](int n_prompt, int n_decode, double& prefill_s, double& decode_s,
                      const std::function<void()>& between) -> Status {
    auto t0 = Clock::now();
    for (int pos = 0; pos < n_prompt; pos += chunk) {
      const int n = std::min(chunk, n_prompt - pos);
      batch.clear();
      batch.add(table, pos, tokens.data() + pos, n, pos + n == n_prompt);
      Status st = runner.value()->forward(batch, logits);
      if (!st.ok()) return st;
    }
    prefill_s = seconds_since(t0);
    int32_t next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    decode_s = 0;
    for (int i = 0; i < n_decode; ++i) {
      t0 = Clock::now();
      batch.clear();
      batch.add(table, n_prompt + i, &next, 1, true);
      Status st = runner.value()->forward(batch, logits);
      if (!st.ok()) return st;
      next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
      decode_s += seconds_since(t0);
      if (between) between();
    }
    return Status();
  };
  // Untimed warm-up (pages the weights in, sizes every buffer), then the
  // best of `repeats` runs: on a shared machine the fastest run is the one
  // least disturbed, as llama-bench's own warm-up + repetitions do.
  double prefill_s = 0, decode_s = 0;
  Status st = run_once(std::min(prompt, 16), std::min(decode, 4), prefill_s, decode_s, nullptr);
  if (!st.ok()) return st;
  for (int rep = 0; rep < config.repeats; ++rep) {
    st = run_once(prompt, decode, prefill_s, decode_s, nullptr);
    if (!st.ok()) return st;
    r.prefill_tok_s = std::max(r.prefill_tok_s, prompt / prefill_s);
    r.decode_tok_s = std::max(r.decode_tok_s, decode / decode_s);
  }
  r.repeats = config.repeats;

  // The roofline: as many runs again, each decoded token followed by one
  // read of every matmul weight by the probe, so both are timed over the
  // same moments (read-bandwidth.h): the probe's fastest read and the best
  // run's decode give the two rates. The probe reads the bytes decode reads
  // (the backend's copies where it has made any).
  const std::vector<kernels::ByteRegion> regions = matmul_regions(runner.value()->weights());
  kernels::ThreadPool probe_pool(config.n_threads);
  kernels::BandwidthProbe probe(probe_pool, regions);
  double fastest_read_s = 0, interleaved_decode_s = 0;
  for (int rep = 0; rep < config.repeats; ++rep) {
    st = run_once(prompt, decode, prefill_s, decode_s, [&] {
      const double s = probe.read_once();
      if (fastest_read_s == 0 || s < fastest_read_s) fastest_read_s = s;
    });
    if (!st.ok()) return st;
    if (interleaved_decode_s == 0 || decode_s < interleaved_decode_s)
      interleaved_decode_s = decode_s;
  }
  double matmul_bytes = 0;
  for (const kernels::ByteRegion& g : regions) matmul_bytes += double(g.bytes);
  r.bytes_per_token =
      matmul_bytes + double(kernels::kv_bytes_per_token(shape)) * (prompt + decode / 2.0);
  r.bandwidth_gbs = fastest_read_s > 0 ? double(probe.bytes()) / fastest_read_s / 1e9 : 0;
  r.interleaved_decode_tok_s = double(decode) / interleaved_decode_s;
  r.decode_gbs = r.bytes_per_token * r.interleaved_decode_tok_s / 1e9;
  r.roofline_tok_s = r.bandwidth_gbs * 1e9 / r.bytes_per_token;
  r.decode_fraction = r.roofline_tok_s > 0 ? r.interleaved_decode_tok_s / r.roofline_tok_s : 0.0;
  return r;
}

}  // namespace rc

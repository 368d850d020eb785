// model-bench: prefill and decode speed of the CPU runtime on GGUF models,
// with decode as a fraction of this machine's memory-bandwidth roofline
// (bandwidth / bytes read per token), measured in the same run.
//
//   model-bench --model a.gguf [--model b.gguf ...] [--threads N]
//               [--prompt 512] [--decode 64]
//
// Prefill runs one sequence of --prompt random tokens in chunks of 512;
// decode then generates --decode tokens one at a time after it. Bytes per
// decoded token = every matmul weight (the output projection included, the
// embedding table only when it is tied to the output) + the K/V read by
// attention at the mean decode position.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "cpu/cpu-backends.h"
#include "dtype.h"
#include "memory-bandwidth.h"
#include "model/model-file.h"
#include "runtime/model-runner.h"

using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int64_t weight_bytes(const rc::kernels::Weight& w) {
  return w.data ? w.rows * rc::kernels::row_bytes(w.type, w.cols) : 0;
}

int64_t matmul_bytes_per_token(const rc::model::ModelWeights& w) {
  int64_t b = weight_bytes(w.output);
  for (const rc::model::LayerWeights& l : w.layers) {
    b += weight_bytes(l.attn_q) + weight_bytes(l.attn_k) + weight_bytes(l.attn_v) +
         weight_bytes(l.attn_output) + weight_bytes(l.ffn_gate) + weight_bytes(l.ffn_up) +
         weight_bytes(l.ffn_down);
  }
  return b;
}

struct Figures {
  double prefill_tok_s = 0, decode_tok_s = 0, bytes_per_token = 0;
};

int run_one(const std::string& path, int threads, int prompt, int decode, double bandwidth_gbs) {
  auto model = rc::model::load_model(path);
  if (!model.ok()) {
    std::fprintf(stderr, "model-bench: %s\n", model.status().to_string().c_str());
    return 1;
  }
  const rc::model::ModelConfig& c = model.value()->config;
  auto backend = rc::kernels::make_cpu_backend(threads);
  const int page_size = 16;
  const int total = prompt + decode;
  const int64_t pages = (total + page_size - 1) / page_size;
  auto pool = backend->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, page_size, pages});
  const int chunk = std::min(prompt, 512);
  auto runner = rc::runtime::ModelRunner::create(*model.value(), *backend, *pool, chunk, 1);
  if (!pool || !runner.ok()) {
    std::fprintf(stderr, "model-bench: cannot allocate the KV pool or scratch\n");
    return 1;
  }
  std::vector<int32_t> table(pages);
  for (int64_t i = 0; i < pages; ++i) table[i] = static_cast<int32_t>(i);
  std::mt19937 rng(1);
  std::vector<int32_t> tokens(prompt);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % c.n_vocab);

  Figures f;
  std::vector<float> logits;
  rc::runtime::ForwardBatch batch;
  auto t0 = Clock::now();
  for (int pos = 0; pos < prompt; pos += chunk) {
    const int n = std::min(chunk, prompt - pos);
    batch.clear();
    batch.add(table, pos, tokens.data() + pos, n, pos + n == prompt);
    if (!runner.value()->forward(batch, logits).ok()) return 1;
  }
  f.prefill_tok_s = prompt / seconds_since(t0);

  int32_t next = 0;
  t0 = Clock::now();
  for (int i = 0; i < decode; ++i) {
    batch.clear();
    batch.add(table, prompt + i, &next, 1, true);
    if (!runner.value()->forward(batch, logits).ok()) return 1;
    next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  f.decode_tok_s = decode / seconds_since(t0);
  const double kv_bytes = 2.0 * c.n_layers * c.n_kv_heads * c.head_dim * sizeof(float) *
                          (prompt + decode / 2.0);
  f.bytes_per_token = double(matmul_bytes_per_token(model.value()->weights)) + kv_bytes;
  const double roofline = bandwidth_gbs * 1e9 / f.bytes_per_token;

  const auto& q = model.value()->weights.layers.front().attn_q;
  std::printf("%-28s %-5s %6.0fM %3d %11.1f %10.1f %10.1f %11.1f %8.1f%%\n",
              path.substr(path.find_last_of('/') + 1).c_str(), rc::kernels::dtype_name(q.type),
              double(model.value()->weights.total_bytes) / 1e6, threads, f.prefill_tok_s,
              f.decode_tok_s, f.bytes_per_token / 1e6, roofline, 100.0 * f.decode_tok_s / roofline);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> models;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int prompt = 512, decode = 64;
  CLI::App app{"Prefill/decode speed of the CPU runtime vs the memory roofline", "model-bench"};
  app.add_option("--model", models, "GGUF files")->required();
  app.add_option("--threads", threads, "threads")->check(CLI::PositiveNumber);
  app.add_option("--prompt", prompt, "prompt tokens")->check(CLI::PositiveNumber);
  app.add_option("--decode", decode, "decoded tokens")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  const double bw = rc::bench::measure_read_bandwidth_gbs(threads);
  std::printf("memory read bandwidth, %d threads: %.1f GB/s\n\n", threads, bw);
  std::printf("%-28s %-5s %7s %3s %11s %10s %10s %11s %9s\n", "model", "type", "bytes", "thr",
              "prefill t/s", "decode t/s", "MB/token", "roofline/s", "of roof");
  int rc = 0;
  for (const std::string& m : models) rc |= run_one(m, threads, prompt, decode, bw);
  return rc;
}

// gpu-bench: speed of the CUDA backend on GGUF models, against ceilings
// measured in the same run.
//
//   gpu-bench --model a.gguf [--model b.gguf ...] [--prefill 2048]
//             [--context 512] [--steps 64] [--batch 1 --batch 32] [--json FILE]
//
// Ceilings: device memory bandwidth from a copy kernel (bytes read + written
// per second) and dense fp16 tensor-core throughput from a large cuBLAS GEMM.
// Prefill: one sequence of --prefill random tokens in one step (best of 3);
//   fraction = (2 * matmul weights + causal attention) FLOPs/s over the fp16 peak.
// Every step is timed as the engine runs it (engine_step below: the logits
//   of every sequence come back to the host and the host sampler picks the
//   token, as engine/runtime/scheduler.cpp does), not ModelRunner's
//   forward_greedy, which the engine never calls.
// Decode at batch B: B sequences with --context tokens each, then --steps
//   greedy steps of one token per sequence; bytes per step = every matmul weight (output included,
//   the embedding table only when tied) + the K/V the step's attention reads; fraction = those
//   bytes per second over the measured bandwidth.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cuda/cuda-backend.h"
#include "dtype.h"
#include "model/model-file.h"
#include "runtime/model-runner.h"
#include "runtime/sampler.h"

using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One step of the engine: forward() with logits to the host, then the
// host Sampler (greedy) per logit row, exactly the scheduler's path.
rc::Status engine_step(rc::runtime::ModelRunner& r, const rc::runtime::ForwardBatch& batch,
                       std::vector<float>& logits, std::vector<int32_t>& ids) {
  rc::Status st = r.forward(batch, logits);
  if (!st.ok()) return st;
  const size_t vocab = size_t(r.config().n_vocab);
  const size_t rows = logits.size() / vocab;
  rc::runtime::Sampler sampler{rc::SamplingParams{}};
  ids.resize(rows);
  for (size_t i = 0; i < rows; ++i)
    ids[i] = sampler.sample(std::span<float>(logits.data() + i * vocab, vocab), {});
  return {};
}

int64_t weight_bytes(const rc::kernels::Weight& w) {
  return w.data ? w.rows * rc::kernels::row_bytes(w.type, w.cols) : 0;
}

struct MatmulTotals {
  int64_t bytes = 0;
  int64_t params = 0;
};

MatmulTotals matmul_totals(const rc::model::ModelWeights& w) {
  MatmulTotals t;
  auto add = [&](const rc::kernels::Weight& x) {
    t.bytes += weight_bytes(x);
    t.params += x.rows * x.cols;
  };
  add(w.output);
  for (const rc::model::LayerWeights& l : w.layers) {
    for (const auto* x :
         {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
      add(*x);
    }
  }
  return t;
}

struct Options {
  std::vector<std::string> models;
  int prefill = 2048;
  int context = 512;
  int steps = 64;
  std::vector<int> batches;
  std::string json;
};

struct Report {
  std::ostringstream json;
  bool first = true;
  void add(const std::string& obj) {
    json << (first ? "" : ",\n") << "    " << obj;
    first = false;
  }
};

std::string fmt(const char* f, double a = 0, double b = 0, double c = 0, double d = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

int run_model(const std::string& path, const Options& o,
              const rc::kernels::cuda::DeviceRoofline& roof, Report& report) {
  auto model = rc::model::load_model(path);
  if (!model.ok()) {
    std::fprintf(stderr, "gpu-bench: %s\n", model.status().to_string().c_str());
    return 1;
  }
  const rc::model::ModelFile& m = *model.value();
  const rc::model::ModelConfig& c = m.config;
  std::string why;
  auto backend = rc::kernels::cuda::make_cuda_backend(&why);
  if (!backend) {
    std::fprintf(stderr, "gpu-bench: no CUDA backend: %s\n", why.c_str());
    return 1;
  }
  const int max_batch = *std::max_element(o.batches.begin(), o.batches.end());
  const int page_size = 16;
  const int per_seq_pages = (std::max(o.prefill, o.context + o.steps) + page_size - 1) / page_size;
  const int64_t pages = int64_t(per_seq_pages) * std::max(max_batch, 1);
  auto pool = backend->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, page_size, pages});
  const int chunk = std::max(o.prefill, 256);
  auto t_load = Clock::now();
  auto runner = pool ? rc::runtime::ModelRunner::create(m, *backend, *pool, chunk, max_batch)
                     : rc::Result<std::unique_ptr<rc::runtime::ModelRunner>>(rc::Status(
                           rc::StatusCode::internal, "no KV pool: " + backend->take_error()));
  if (!runner.ok()) {
    std::fprintf(stderr, "gpu-bench: %s\n", runner.status().to_string().c_str());
    return 1;
  }
  const double load_s = seconds_since(t_load);
  rc::runtime::ModelRunner& r = *runner.value();
  const MatmulTotals mm = matmul_totals(m.weights);
  const std::string name = std::filesystem::path(path).filename().string();
  std::printf(
      "\n%s: %s, %d layers, dim %d, %d/%d heads, ffn %d, vocab %d; %.2f GB of matmul "
      "weights (%.2f B params); copied to the device in %.1f s\n",
      name.c_str(), rc::kernels::dtype_name(m.weights.layers[0].ffn_down.type), c.n_layers, c.dim,
      c.n_heads, c.n_kv_heads, c.ffn_dim, c.n_vocab, double(mm.bytes) / 1e9,
      double(mm.params) / 1e9, load_s);

  std::vector<std::vector<int32_t>> tables(size_t(std::max(max_batch, 1)));
  for (size_t s = 0; s < tables.size(); ++s) {
    for (int p = 0; p < per_seq_pages; ++p) tables[s].push_back(int32_t(s * per_seq_pages + p));
  }
  auto token = [&](int i) { return int32_t((int64_t(i) * 7919 + 13) % c.n_vocab); };
  const int64_t kv_row_bytes = int64_t(c.n_layers) * c.n_kv_heads * c.head_dim * 4 * 2;

  // Prefill: one sequence, one step.
  {
    std::vector<int32_t> toks(static_cast<size_t>(o.prefill));
    for (int i = 0; i < o.prefill; ++i) toks[size_t(i)] = token(i);
    rc::runtime::ForwardBatch batch;
    batch.add(tables[0], 0, toks.data(), o.prefill, true);
    std::vector<int32_t> ids;
    std::vector<float> logits;
    double best = 1e30;
    for (int rep = 0; rep < 4; ++rep) {  // the first is a warm-up
      auto t0 = Clock::now();
      rc::Status st = engine_step(r, batch, logits, ids);
      const double s = seconds_since(t0);
      if (!st.ok()) {
        std::fprintf(stderr, "gpu-bench: prefill: %s\n", st.to_string().c_str());
        return 1;
      }
      if (rep > 0) best = std::min(best, s);
    }
    const double n = o.prefill;
    const double attn_flops = 4.0 * c.n_heads * c.head_dim * c.n_layers * (n * (n + 1) / 2);
    const double flops = 2.0 * double(mm.params) * n + attn_flops;
    const double tflops = flops / best / 1e12;
    std::printf(
        "  prefill %d tokens: %.0f tok/s, %.1f TFLOP/s = %.1f%% of the measured fp16 peak\n",
        o.prefill, n / best, tflops, 100.0 * tflops / roof.fp16_tflops);
    // The model's name is filled in by main (entries are made with it blank).
    report.add(
        "{\"model\": \"\", \"phase\": \"prefill\", \"tokens\": " + std::to_string(o.prefill) +
        fmt(", \"tok_s\": %.1f, \"tflops\": %.2f, \"fraction_of_peak\": %.4f}", n / best, tflops,
            tflops / roof.fp16_tflops));
  }

  for (int B : o.batches) {
    // Fill the B sequences' contexts in chunks the runner takes.
    std::vector<int32_t> next(static_cast<size_t>(B));
    for (int s = 0; s < B; ++s) {
      std::vector<int32_t> toks(static_cast<size_t>(o.context));
      for (int i = 0; i < o.context; ++i) toks[size_t(i)] = token(i + 1000 * s);
      for (int done = 0; done < o.context;) {
        const int n = std::min(chunk, o.context - done);
        rc::runtime::ForwardBatch batch;
        batch.add(tables[size_t(s)], done, toks.data() + done, n, done + n == o.context);
        std::vector<int32_t> ids;
        std::vector<float> logits;
        rc::Status st = engine_step(r, batch, logits, ids);
        if (!st.ok()) {
          std::fprintf(stderr, "gpu-bench: context: %s\n", st.to_string().c_str());
          return 1;
        }
        if (!ids.empty()) next[size_t(s)] = ids[0];
        done += n;
      }
    }
    rc::runtime::ForwardBatch batch;
    std::vector<int32_t> ids;
    std::vector<float> logits;
    double secs = 0.0;
    for (int step = 0; step < o.steps; ++step) {
      batch.clear();
      for (int s = 0; s < B; ++s)
        batch.add(tables[size_t(s)], o.context + step, &next[size_t(s)], 1, true);
      auto t0 = Clock::now();
      rc::Status st = engine_step(r, batch, logits, ids);
      if (step > 0) secs += seconds_since(t0);  // step 0 warms up this batch size
      if (!st.ok()) {
        std::fprintf(stderr, "gpu-bench: decode: %s\n", st.to_string().c_str());
        return 1;
      }
      std::copy(ids.begin(), ids.end(), next.begin());
    }
    const int timed = o.steps - 1;
    const double mean_ctx = o.context + o.steps / 2.0;
    const double bytes_per_step = double(mm.bytes) + double(B) * mean_ctx * double(kv_row_bytes);
    const double gbs = bytes_per_step * timed / secs / 1e9;
    const double tok_s = double(B) * timed / secs;
    std::printf(
        "  decode batch %2d at context %d: %.1f tok/s (%.2f ms/step), %.0f GB/s = %.1f%% of "
        "the measured bandwidth roofline\n",
        B, o.context, tok_s, 1e3 * secs / timed, gbs, 100.0 * gbs / roof.copy_gbs);
    report.add("{\"model\": \"\", \"phase\": \"decode\", \"batch\": " + std::to_string(B) +
               ", \"context\": " + std::to_string(o.context) +
               fmt(", \"tok_s\": %.2f, \"ms_per_step\": %.3f, \"gb_s\": %.1f, "
                   "\"fraction_of_roofline\": %.4f}",
                   tok_s, 1e3 * secs / timed, gbs, gbs / roof.copy_gbs));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"CUDA backend speed against the device's measured ceilings", "gpu-bench"};
  app.add_option("--model", o.models, "GGUF model (repeatable)")->required();
  app.add_option("--prefill", o.prefill, "prefill length")->capture_default_str();
  app.add_option("--context", o.context, "context before decode")->capture_default_str();
  app.add_option("--steps", o.steps, "decode steps per batch size")->capture_default_str();
  app.add_option("--batch", o.batches, "decode batch sizes (default 1 and 32)");
  app.add_option("--json", o.json, "also write the figures as JSON to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (o.batches.empty()) o.batches = {1, 32};
  if (o.prefill < 1 || o.context < 1 || o.steps < 2) {
    std::fprintf(stderr, "gpu-bench: --prefill, --context >= 1 and --steps >= 2\n");
    return 2;
  }
  const auto roof = rc::kernels::cuda::measure_roofline(size_t(1) << 30, 8192);
  if (!roof.error.empty()) {
    std::fprintf(stderr, "gpu-bench: %s\n", roof.error.c_str());
    return 1;
  }
  std::printf(
      "device: %s\n  copy bandwidth %.0f GB/s (read + write, 1 GiB)\n"
      "  fp16 tensor-core GEMM %.1f TFLOP/s (8192^3, fp32 accumulate)\n",
      roof.device.c_str(), roof.copy_gbs, roof.fp16_tflops);
  Report report;
  int rc = 0;
  for (const std::string& m : o.models) {
    const size_t before = report.json.str().size();
    rc |= run_model(m, o, roof, report);
    // Name the model in the entries it added.
    std::string all = report.json.str();
    const std::string blank = "\"model\": \"\"", named = "\"model\": \"" + m + "\"";
    for (size_t p = all.find(blank, before); p != std::string::npos; p = all.find(blank, p)) {
      all.replace(p, blank.size(), named);
    }
    report.json.str(all);
    report.json.seekp(0, std::ios::end);
  }
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << "{\n  \"device\": \"" << roof.device << "\",\n  \"copy_gbs\": " << roof.copy_gbs
      << ",\n  \"fp16_tflops\": " << roof.fp16_tflops << ",\n  \"runs\": [\n"
      << report.json.str() << "\n  ]\n}\n";
  }
  return rc;
}

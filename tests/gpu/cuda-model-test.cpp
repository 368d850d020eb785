// Whole models on the GPU: the bundled model's golden logits and greedy
// tokens through the Engine with --backend cuda, cached-vs-uncached equality
// on the GPU, and the runner on random-weight models of every storage type
// (llama and qwen2, llama3 rope) against the runner on the reference
// backend, including multi-sequence batches. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>

#include <nlohmann/json.hpp>

#include "golden-logits.h"
#include "gpu-test-util.h"
#include "model/model-file.h"
#include "radixchat/engine.h"
#include "random-gguf.h"
#include "runtime/model-runner.h"

namespace rc {
namespace {

using GoldenCase = rc::testing::GoldenLogits;
using rc::testing::max_abs_diff;

std::vector<GoldenCase> load_golden() { return rc::testing::load_golden_logits(); }

float range(const std::vector<float>& a) { return rc::testing::value_range(a); }

// An engine that must run on CUDA: skipped without a device, failed when a
// device answers but the engine fell back to the CPU.
std::unique_ptr<Engine> open_cuda(const std::string& cache) {
  EngineConfig cfg;
  cfg.cache = parse_cache_setting(cache).value();
  cfg.backend = BackendSetting::cuda;
  auto e = Engine::create(cfg);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  if (!e.ok()) return nullptr;
  EXPECT_EQ(e.value()->model_info().backend, "cuda") << e.value()->model_info().backend_reason;
  return std::move(e.value());
}

std::vector<int32_t> greedy(Engine& engine, const std::vector<int32_t>& tokens, int n) {
  GenerateRequest req;
  req.tokens = tokens;
  req.max_tokens = n;
  req.ignore_eos = true;
  std::vector<int32_t> out;
  std::promise<void> done;
  auto id = engine.submit(req, [&](const StreamEvent& ev) {
    if (ev.token >= 0) out.push_back(ev.token);
    if (ev.finished) done.set_value();
    return true;
  });
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  if (id.ok()) done.get_future().wait();
  return out;
}

TEST(CudaEngine, GoldenLogitsAndGreedyTokens) {
  RC_REQUIRE_CUDA(probe);
  probe.reset();
  std::unique_ptr<Engine> engine = open_cuda("off");
  ASSERT_TRUE(engine);
  for (const GoldenCase& c : load_golden()) {
    auto logits = engine->last_logits(c.tokens);
    ASSERT_TRUE(logits.ok()) << logits.status().to_string();
    EXPECT_LE(max_abs_diff(logits.value(), c.logits), 1e-3f * range(c.logits)) << c.name;
    EXPECT_EQ(greedy(*engine, c.tokens, int(c.greedy.size())), c.greedy) << c.name;
  }
}

TEST(CudaEngine, CachedEqualsUncached) {
  RC_REQUIRE_CUDA(probe);
  probe.reset();
  const std::vector<GoldenCase> cases = load_golden();
  std::unique_ptr<Engine> cold = open_cuda("off");
  ASSERT_TRUE(cold);
  for (const char* policy : {"radix", "radix-page16", "hash16"}) {
    std::unique_ptr<Engine> warm = open_cuda(policy);
    ASSERT_TRUE(warm);
    for (const GoldenCase& c : cases) ASSERT_TRUE(warm->last_logits(c.tokens).ok());
    const uint64_t cached_before = warm->stats().cached_tokens;
    for (const GoldenCase& c : cases) {
      auto hot = warm->last_logits(c.tokens);
      auto ref = cold->last_logits(c.tokens);
      ASSERT_TRUE(hot.ok() && ref.ok());
      EXPECT_LE(max_abs_diff(hot.value(), ref.value()), 1e-4f * range(ref.value()))
          << policy << " " << c.name;
      EXPECT_EQ(greedy(*warm, c.tokens, 16), greedy(*cold, c.tokens, 16))
          << policy << " " << c.name;
    }
    EXPECT_GT(warm->stats().cached_tokens, cached_before) << policy;
  }
}

// ---- the runner on random-weight models ------------------------------------

struct ModelCase {
  std::string type;
  std::string arch = "llama";
  bool llama3 = false;
};

void PrintTo(const ModelCase& c, std::ostream* os) {
  *os << c.arch << " " << c.type << (c.llama3 ? " llama3" : "");
}

class CudaRunner : public ::testing::TestWithParam<ModelCase> {};

std::unique_ptr<model::ModelFile> random_model(const ModelCase& c) {
  testing::RandomModelSpec s;
  s.arch = c.arch;
  s.dim = 256;
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = 2;
  s.ffn = 512;
  s.vocab = 300;
  s.ctx = 512;
  s.type = c.type;
  s.llama3_rope = c.llama3;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rc-gpu-" + c.arch + "-" + c.type + (c.llama3 ? "-l3" : "") + ".gguf"))
                               .string();
  EXPECT_TRUE(testing::write_random_model(s, path).ok());
  auto m = model::load_model(path);
  std::filesystem::remove(path);  // the mapping stays valid
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m.value()) : nullptr;
}

// Runs the same steps on two runners and compares the logits of each step.
struct Pair {
  std::unique_ptr<kernels::Backend> backend;
  std::unique_ptr<kernels::KvPool> pool;
  std::unique_ptr<runtime::ModelRunner> runner;
};

Pair make_pair_on(std::unique_ptr<kernels::Backend> b, const model::ModelFile& m) {
  Pair p;
  p.backend = std::move(b);
  const model::ModelConfig& c = m.config;
  p.pool = p.backend->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, 4, 64});
  EXPECT_TRUE(p.pool);
  auto r = runtime::ModelRunner::create(m, *p.backend, *p.pool, 64, 4);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (r.ok()) p.runner = std::move(r.value());
  return p;
}

std::vector<int32_t> tokens_of(int n, int seed, int vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = int32_t((i * 37 + seed * 11 + 5) % vocab);
  return t;
}

// Two sequences: A prefills `prefill` tokens and B 20, in one batch; then
// three steps of A decoding one token while B adds a chunk of 5.
void run_and_compare(std::unique_ptr<kernels::Backend> gpu, const model::ModelFile& m, int prefill,
                     float tol, const std::string& what) {
  Pair dev = make_pair_on(std::move(gpu), m);
  Pair ref = make_pair_on(kernels::make_reference_backend(), m);
  ASSERT_TRUE(dev.runner && ref.runner);
  const int vocab = m.config.n_vocab;
  const std::vector<int32_t> table_a{3, 9, 0, 12, 5, 7, 1, 14, 20, 21, 22, 23, 24, 25};
  const std::vector<int32_t> table_b{2, 8, 4, 6, 10, 11, 13, 15, 16, 17, 18, 19};
  const std::vector<int32_t> a = tokens_of(prefill + 3, 1, vocab), b = tokens_of(35, 2, vocab);
  for (int step = 0; step < 4; ++step) {
    runtime::ForwardBatch batch;
    if (step == 0) {
      batch.add(table_a, 0, a.data(), prefill, true);
      batch.add(table_b, 0, b.data(), 20, true);
    } else {
      batch.add(table_a, prefill + step - 1, a.data() + prefill + step - 1, 1, true);
      batch.add(table_b, 20 + 5 * (step - 1), b.data() + 20 + 5 * (step - 1), 5, true);
    }
    std::vector<float> got, want;
    Status st = dev.runner->forward(batch, got);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_TRUE(ref.runner->forward(batch, want).ok());
    for (int row = 0; row < 2; ++row) {
      const std::vector<float> g(got.begin() + row * vocab, got.begin() + (row + 1) * vocab);
      const std::vector<float> w(want.begin() + row * vocab, want.begin() + (row + 1) * vocab);
      EXPECT_LE(max_abs_diff(g, w), tol * range(w))
          << what << " step " << step << " row " << row << " range " << range(w);
    }
  }
  // forward_greedy returns the argmax of what forward would return.
  runtime::ForwardBatch batch;
  batch.add(table_a, prefill + 3, a.data(), 1, true);
  std::vector<float> logits;
  std::vector<int32_t> ids;
  ASSERT_TRUE(dev.runner->forward(batch, logits).ok());
  // The same position again: the KV write is identical, so are the logits.
  ASSERT_TRUE(dev.runner->forward_greedy(batch, ids).ok());
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0], int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin()))
      << what;
}

// Up to 8 tokens per matmul every weight type runs the exact-decode GEMV in
// fp32: the logits match the reference to fp32 summation order.
TEST_P(CudaRunner, ExactPathMatchesReference) {
  RC_REQUIRE_CUDA(gpu);
  auto m = random_model(GetParam());
  ASSERT_TRUE(m);
  run_and_compare(std::move(gpu), *m, 7, 1e-4f, GetParam().type + " exact");
}

// Prefill of 40 tokens: cuBLAS with 16-bit activations for all but F32.
TEST_P(CudaRunner, PrefillPathMatchesReference) {
  RC_REQUIRE_CUDA(gpu);
  auto m = random_model(GetParam());
  ASSERT_TRUE(m);
  const bool f32 = GetParam().type == "f32";
  run_and_compare(std::move(gpu), *m, 40, f32 ? 1e-4f : 2e-2f, GetParam().type + " prefill");
}

INSTANTIATE_TEST_SUITE_P(
    Models, CudaRunner,
    ::testing::Values(ModelCase{"f32"}, ModelCase{"f16"}, ModelCase{"bf16"}, ModelCase{"q8_0"},
                      ModelCase{"q4_0"}, ModelCase{"q4_k"}, ModelCase{"q6_k"}, ModelCase{"q4_k_m"},
                      ModelCase{"q4_k", "qwen2"}, ModelCase{"f16", "llama", true}),
    [](const auto& info) {
      return info.param.arch + "_" + info.param.type + (info.param.llama3 ? "_llama3" : "");
    });

}  // namespace
}  // namespace rc

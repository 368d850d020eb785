// CPU-side tests of the plumbing a device backend relies on; they run
// everywhere (no `gpu` label):
//   - DeviceWeights is the identity on host backends that read the
//     mapping, copies for the CPU backend where it prefers copies, and on a (fake)
//     device backend copies every tensor once, tied output included, and
//     cleans up when the device runs out of memory;
//   - the runner on that fake device only ever hands the backend pointers
//     into the backend's own memory, and computes what the reference does;
//   - the step's positions / slots / attention descriptors are computed once
//     on the host, as the page tables say;
//   - backend selection falls back to the CPU with a reason;
//   - forward_greedy is the argmax of forward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "checking-backend.h"
#include "cpu/cpu-backends.h"
#include "device-select.h"
#include "model/default-model.h"
#include "model/model-file.h"
#include "radixchat/engine.h"
#include "random-gguf.h"
#include "runtime/device-weights.h"
#include "runtime/model-runner.h"

namespace rc {
namespace {

using kernels::test::CheckingBackend;

std::unique_ptr<model::ModelFile> bundled_model() {
  auto m = model::load_model(model::default_model_path());
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m.value()) : nullptr;
}

std::unique_ptr<model::ModelFile> random_model(const std::string& type, bool tied,
                                               const std::string& arch = "llama") {
  testing::RandomModelSpec s;
  s.arch = arch;
  s.dim = 256;
  s.heads = 4;
  s.kv_heads = 2;
  s.ffn = 512;
  s.type = type;
  s.tied_output = tied;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("rc-plumbing-" + arch + type + ".gguf")).string();
  EXPECT_TRUE(testing::write_random_model(s, path).ok());
  auto m = model::load_model(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m.value()) : nullptr;
}

TEST(BackendDefaults, HostBackendsDescribeHostMemory) {
  std::vector<std::unique_ptr<kernels::Backend>> backends;
  backends.push_back(kernels::make_reference_backend());
  backends.push_back(kernels::make_cpu_backend(1));
  for (auto& b : backends) {
    EXPECT_TRUE(b->host_memory()) << b->name();
    EXPECT_EQ(b->free_memory(), -1);
    EXPECT_EQ(b->take_error(), "");
    const std::vector<float> x{1.0f, 5.0f, 5.0f, -2.0f, 0.0f, 9.0f};
    int32_t ids[2] = {-1, -1};
    b->argmax_rows(x.data(), 2, 3, ids);  // the default: argmax per row
    EXPECT_EQ(ids[0], 1);
    EXPECT_EQ(ids[1], 2);
  }
}

// The checks below mean something only if the fake device catches a host
// pointer where a device pointer belongs.
TEST(CheckingBackend, CatchesHostPointers) {
  CheckingBackend dev;
  std::vector<float> host(16, 1.0f);
  void* p = dev.alloc(16 * sizeof(float));
  ASSERT_NE(p, nullptr);
  dev.upload(p, host.data(), 16 * sizeof(float));
  EXPECT_EQ(dev.take_error(), "");
  dev.add(static_cast<float*>(p), host.data(), 16);  // x is host memory
  EXPECT_NE(dev.take_error().find("add x"), std::string::npos);
  dev.free(p);
  EXPECT_EQ(dev.live_allocations(), 0u);
}

TEST(DeviceWeights, IdentityOnHostBackendsThatReadTheMapping) {
  auto m = bundled_model();
  ASSERT_TRUE(m);
  auto backend = kernels::make_reference_backend();
  auto dw = runtime::DeviceWeights::create(*m, *backend);
  ASSERT_TRUE(dw.ok());
  EXPECT_FALSE(dw.value()->copied());
  EXPECT_EQ(dw.value()->bytes(), 0u);
  EXPECT_EQ(&dw.value()->weights(), &m->weights);
}

// The fast CPU backend gets copies where it prefers them (huge pages on
// this kernel, enough memory): every tensor once, tied output sharing
// token_embd's copy, equal to the file's bytes, which still read back the
// same from the mapping after its pages were released.
TEST(DeviceWeights, CpuBackendGetsCopiesWhereItPrefersThem) {
  for (bool tied : {false, true}) {
    auto m = random_model("f16", tied, "llama");
    ASSERT_TRUE(m);
    auto backend = kernels::make_cpu_backend(1);
    const model::ModelWeights& h = m->weights;
    const uint64_t need = runtime::DeviceWeights::bytes_needed(h);
    auto dw = runtime::DeviceWeights::create(*m, *backend);
    ASSERT_TRUE(dw.ok()) << dw.status().to_string();
    const bool copies = backend->prefers_weight_copies(need);
    EXPECT_EQ(dw.value()->copied(), copies);
    auto mapped = runtime::DeviceWeights::create(*m, *backend, /*host_copies=*/false);
    ASSERT_TRUE(mapped.ok());
    EXPECT_EQ(&mapped.value()->weights(), &h);  // the lessons' engines share the mapping
    EXPECT_EQ(backend->prefers_weight_copies(uint64_t(1) << 62), false);  // never past memory
    if (!copies) {
      EXPECT_EQ(&dw.value()->weights(), &h);
      continue;
    }
    const model::ModelWeights& w = dw.value()->weights();
    EXPECT_EQ(dw.value()->bytes(), need);
    auto same_bytes = [&](const kernels::Weight& a, const kernels::Weight& b) {
      const size_t n = size_t(b.rows * kernels::row_bytes(b.type, b.cols));
      EXPECT_NE(a.data, b.data);
      EXPECT_EQ(0, std::memcmp(a.data, b.data, n));
    };
    same_bytes(w.token_embd, h.token_embd);
    same_bytes(w.output, h.output);
    EXPECT_EQ(w.output.data == w.token_embd.data, tied);
    for (size_t l = 0; l < h.layers.size(); ++l) {
      same_bytes(w.layers[l].attn_q, h.layers[l].attn_q);
      same_bytes(w.layers[l].attn_v, h.layers[l].attn_v);
      same_bytes(w.layers[l].ffn_down, h.layers[l].ffn_down);
      same_bytes(w.layers[l].ffn_norm, h.layers[l].ffn_norm);
    }
  }
}

TEST(DeviceWeights, CopiesEveryTensorOnceToADeviceBackend) {
  for (bool tied : {false, true}) {
    auto m = random_model("q4_k_m", tied, "qwen2");  // biases, mixed types
    ASSERT_TRUE(m);
    CheckingBackend dev;
    auto dw = runtime::DeviceWeights::create(*m, dev);
    ASSERT_TRUE(dw.ok()) << dw.status().to_string();
    const model::ModelWeights& w = dw.value()->weights();
    const model::ModelWeights& h = m->weights;
    EXPECT_TRUE(dw.value()->copied());
    EXPECT_EQ(dw.value()->bytes(), runtime::DeviceWeights::bytes_needed(h));
    EXPECT_EQ(int64_t(dw.value()->bytes()), dev.used_bytes());
    auto same_bytes = [&](const kernels::Weight& a, const kernels::Weight& b) {
      const size_t n = size_t(b.rows * kernels::row_bytes(b.type, b.cols));
      EXPECT_NE(a.data, b.data);
      EXPECT_TRUE(dev.owns(a.data, n));
      EXPECT_EQ(a.type, b.type);
      EXPECT_EQ(a.rows, b.rows);
      EXPECT_EQ(0, std::memcmp(a.data, b.data, n));
    };
    same_bytes(w.token_embd, h.token_embd);
    same_bytes(w.output, h.output);
    same_bytes(w.output_norm, h.output_norm);
    for (size_t l = 0; l < h.layers.size(); ++l) {
      same_bytes(w.layers[l].attn_q, h.layers[l].attn_q);
      same_bytes(w.layers[l].ffn_down, h.layers[l].ffn_down);
      same_bytes(w.layers[l].attn_norm, h.layers[l].attn_norm);
      ASSERT_NE(h.layers[l].bias_k, nullptr);
      EXPECT_TRUE(dev.owns(w.layers[l].bias_k, size_t(h.layers[l].attn_k.rows) * 4));
      EXPECT_EQ(0, std::memcmp(w.layers[l].bias_k, h.layers[l].bias_k,
                               size_t(h.layers[l].attn_k.rows) * 4));
    }
    // A tied output is one copy, shared like the model shares it.
    EXPECT_EQ(w.output.data == w.token_embd.data, tied);
    const size_t live = dev.live_allocations();
    dw = Status(StatusCode::cancelled, "drop");  // destroys the copies
    EXPECT_EQ(dev.live_allocations(), 0u) << live;
  }
}

TEST(DeviceWeights, OutOfDeviceMemoryIsAClearErrorAndFreesEverything) {
  auto m = random_model("f16", false);
  ASSERT_TRUE(m);
  CheckingBackend dev(int64_t(runtime::DeviceWeights::bytes_needed(m->weights) / 2));
  auto dw = runtime::DeviceWeights::create(*m, dev);
  ASSERT_FALSE(dw.ok());
  EXPECT_EQ(dw.status().code(), StatusCode::internal);
  EXPECT_NE(dw.status().message().find("out of checking device memory"), std::string::npos)
      << dw.status().message();
  EXPECT_EQ(dev.live_allocations(), 0u);
  // The runner reports the same failure instead of running on host pointers.
  auto pool =
      dev.make_kv_pool({m->config.n_layers, m->config.n_kv_heads, m->config.head_dim, 1, 64});
  auto runner = runtime::ModelRunner::create(*m, dev, *pool, 16, 2);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(dev.live_allocations(), 0u);
}

// The runner on a device backend passes only device pointers (the checking
// backend records anything else) and computes exactly what it computes on
// the reference backend, whose ops it runs.
TEST(RunnerOnDevice, UsesOnlyDeviceMemoryAndMatchesReference) {
  auto m = bundled_model();
  ASSERT_TRUE(m);
  const model::ModelConfig& c = m->config;
  CheckingBackend dev;
  auto ref = kernels::make_reference_backend();
  auto dev_pool = dev.make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, 4, 32});
  auto ref_pool = ref->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, 4, 32});
  auto dev_runner = runtime::ModelRunner::create(*m, dev, *dev_pool, 32, 2);
  auto ref_runner = runtime::ModelRunner::create(*m, *ref, *ref_pool, 32, 2);
  ASSERT_TRUE(dev_runner.ok() && ref_runner.ok()) << dev_runner.status().to_string();
  const std::vector<int32_t> ta{5, 1, 9, 30}, tb{7, 2, 11};
  const std::vector<int32_t> tokens{1, 3, 17, 874, 480, 505, 324, 654, 12, 99, 1, 400, 33};
  runtime::ForwardBatch batch;
  batch.add(ta, 0, tokens.data(), 9, true);
  batch.add(tb, 0, tokens.data() + 9, 4, true);
  std::vector<float> got, want;
  Status st = dev_runner.value()->forward(batch, got);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_TRUE(ref_runner.value()->forward(batch, want).ok());
  EXPECT_EQ(got, want);
  std::vector<int32_t> ids;
  ASSERT_TRUE(dev_runner.value()->forward_greedy(batch, ids).ok());
  ASSERT_EQ(ids.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const auto row = want.begin() + r * c.n_vocab;
    EXPECT_EQ(ids[size_t(r)], int32_t(std::max_element(row, row + c.n_vocab) - row));
  }
}

// Qwen3's per-head q/k norm weights are copied too: the runner on a device
// backend reads no host pointer and matches the reference.
TEST(RunnerOnDevice, Qwen3QkNormsLiveOnTheDevice) {
  auto m = random_model("q8_0", true, "qwen3");
  ASSERT_TRUE(m);
  const model::ModelConfig& c = m->config;
  ASSERT_TRUE(c.qk_norm);
  CheckingBackend dev;
  auto ref = kernels::make_reference_backend();
  auto dev_pool = dev.make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, 4, 8});
  auto ref_pool = ref->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, 4, 8});
  auto dev_runner = runtime::ModelRunner::create(*m, dev, *dev_pool, 16, 1);
  auto ref_runner = runtime::ModelRunner::create(*m, *ref, *ref_pool, 16, 1);
  ASSERT_TRUE(dev_runner.ok() && ref_runner.ok()) << dev_runner.status().to_string();
  const std::vector<int32_t> pages{3, 0, 1}, tokens{1, 40, 7, 99, 250, 12};
  runtime::ForwardBatch batch;
  batch.add(pages, 0, tokens.data(), 6, true);
  std::vector<float> got, want;
  Status st = dev_runner.value()->forward(batch, got);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_TRUE(ref_runner.value()->forward(batch, want).ok());
  EXPECT_EQ(got, want);
}

TEST(StepIndices, PositionsSlotsAndSequencesFollowThePageTables) {
  const std::vector<int32_t> ta{5, 2}, tb{7, 0, 3};
  const std::vector<int32_t> tokens{10, 11, 12, 13, 14, 15, 16};
  runtime::ForwardBatch batch;
  batch.add(ta, 3, tokens.data(), 2, true);       // positions 3, 4
  batch.add(tb, 6, tokens.data() + 2, 5, false);  // positions 6 .. 10
  runtime::StepIndices s;
  runtime::build_step_indices(batch, 4, s);
  EXPECT_EQ(s.positions, (std::vector<int32_t>{3, 4, 6, 7, 8, 9, 10}));
  // slot = table[pos / 4] * 4 + pos % 4
  EXPECT_EQ(s.slots, (std::vector<int32_t>{23, 8, 2, 3, 12, 13, 14}));
  ASSERT_EQ(s.seqs.size(), 2u);
  EXPECT_EQ(s.seqs[0].page_table, ta.data());
  EXPECT_EQ(s.seqs[0].n_past, 3);
  EXPECT_EQ(s.seqs[0].n_new, 2);
  EXPECT_EQ(s.seqs[0].q_row, 0);
  EXPECT_EQ(s.seqs[1].page_table, tb.data());
  EXPECT_EQ(s.seqs[1].n_past, 6);
  EXPECT_EQ(s.seqs[1].q_row, 2);
  // Reused for the next step without stale entries.
  runtime::ForwardBatch one;
  one.add(ta, 0, tokens.data(), 1, true);
  runtime::build_step_indices(one, 4, s);
  EXPECT_EQ(s.positions, (std::vector<int32_t>{0}));
  EXPECT_EQ(s.slots, (std::vector<int32_t>{20}));
  EXPECT_EQ(s.seqs.size(), 1u);
}

TEST(BackendSelection, CpuOnRequestAndFallbackWithAReason) {
  EngineConfig cfg;
  cfg.backend = BackendSetting::cpu;
  cfg.n_threads = 1;
  auto cpu = Engine::create(cfg);
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  EXPECT_EQ(cpu.value()->model_info().backend, "cpu");
  EXPECT_EQ(cpu.value()->model_info().backend_reason, "CPU requested");

  cfg.backend = BackendSetting::cuda;
  auto asked = Engine::create(cfg);
  ASSERT_TRUE(asked.ok()) << asked.status().to_string();
  const ModelInfo& info = asked.value()->model_info();
  EXPECT_FALSE(info.backend_reason.empty());
  const kernels::DeviceChoice choice = kernels::select_device(kernels::DeviceRequest::cuda);
  if (choice.kind == kernels::DeviceKind::cpu) {
    // No driver, no device or no CUDA in this build: the CPU runs, and the
    // reason says why ("No NVIDIA GPU found", or what CUDA answered).
    EXPECT_EQ(info.backend, "cpu");
    EXPECT_TRUE(info.backend_reason.find("NVIDIA") != std::string::npos ||
                info.backend_reason.find("CUDA") != std::string::npos)
        << info.backend_reason;
    EXPECT_EQ(info.device.rfind("cpu", 0), 0u) << info.device;
  } else {
    EXPECT_EQ(info.backend, "cuda") << info.backend_reason;
  }
  // Either way the engine answers.
  auto logits = asked.value()->last_logits({1, 3, 17});
  ASSERT_TRUE(logits.ok()) << logits.status().to_string();
  EXPECT_EQ(logits->size(), size_t(info.n_vocab));
}

}  // namespace
}  // namespace rc

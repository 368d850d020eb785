// The cache never changes the answer: a position's logits are the same bits
// (memcmp, no tolerance) however its tokens reached the pool — one token per
// step (decode), in prefill chunks of any size, after a cache hit at any
// split point, beside unrelated sequences in the same step, on one thread or
// two, in pages of 1 or 16 slots scattered through the pool — for every KV
// type and the weight types real files carry
// (docs/architecture.md section 7).
//
// The oracle is the model run one token per step: every other schedule must
// reproduce each of its logit rows exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "cpu/cpu-backends.h"
#include "model/default-model.h"
#include "model/model-file.h"
#include "prompt-ids.h"
#include "random-gguf.h"
#include "runtime/forward-batch.h"
#include "runtime/model-runner.h"

namespace rc::runtime {
namespace {

using testing::prompt_ids;

using kernels::DType;

constexpr int kPromptTokens = 300;  // past one 256-key attention segment
constexpr int kMaxChunk = 512;

// One pool and runner; sequences get pages from a scattered free list.
class Rig {
 public:
  Rig(const model::ModelFile& m, int threads, int page_size, DType kv_type)
      : backend_(kernels::make_cpu_backend(threads)), page_size_(page_size) {
    const model::ModelConfig& c = m.config;
    const int64_t pages = 4096 / page_size;
    pool_ =
        backend_->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, page_size, pages, kv_type});
    runner_ = std::move(ModelRunner::create(m, *backend_, *pool_, kMaxChunk, 8).value());
    // Pages handed out back to front and interleaved, so no sequence's
    // pages are consecutive or in order.
    for (int64_t p = pages - 1; p >= 0; p -= 2) free_.push_back(int32_t(p));
    for (int64_t p = pages - 2; p >= 0; p -= 2) free_.push_back(int32_t(p));
  }

  std::vector<int32_t> pages_for(int tokens) {
    std::vector<int32_t> t;
    for (int i = 0; i < (tokens + page_size_ - 1) / page_size_; ++i) {
      t.push_back(free_.back());
      free_.pop_back();
    }
    return t;
  }

  // One step; returns the logit rows in batch order.
  std::vector<float> step(const ForwardBatch& b) {
    std::vector<float> logits;
    const Status st = runner_->forward(b, logits);
    EXPECT_TRUE(st.ok()) << st.to_string();
    return logits;
  }

  int vocab() const { return runner_->config().n_vocab; }

 private:
  std::unique_ptr<kernels::Backend> backend_;
  std::unique_ptr<kernels::KvPool> pool_;
  std::unique_ptr<ModelRunner> runner_;
  int page_size_;
  std::vector<int32_t> free_;
};

// Logits of every position, one token per step (the decode path).
std::vector<std::vector<float>> one_token_per_step(Rig& rig, const std::vector<int32_t>& ids) {
  const std::vector<int32_t> pages = rig.pages_for(int(ids.size()));
  std::vector<std::vector<float>> rows;
  for (size_t i = 0; i < ids.size(); ++i) {
    ForwardBatch b;
    b.add(pages, int(i), ids.data() + i, 1, true);
    rows.push_back(rig.step(b));
  }
  return rows;
}

bool same_bits(const std::vector<float>& a, const float* b) {
  return std::memcmp(a.data(), b, a.size() * sizeof(float)) == 0;
}

// The prompt in chunks of `chunk` tokens; `neighbours` unrelated sequences
// share every step (each its own prompt, advancing by a chunk of a
// different length). Every chunk end of the prompt is checked against the
// oracle's row; returns the number of rows that differ.
int chunked_mismatches(Rig& rig, const std::vector<int32_t>& ids,
                       const std::vector<std::vector<float>>& oracle, int chunk, int neighbours,
                       int first_split = 0) {
  const int n = int(ids.size());
  const std::vector<int32_t> pages = rig.pages_for(n);
  struct Other {
    std::vector<int32_t> ids, pages;
    int done = 0, chunk = 1;
  };
  std::vector<Other> others(static_cast<size_t>(neighbours));
  for (int j = 0; j < neighbours; ++j) {
    Other& o = others[size_t(j)];
    o.ids = prompt_ids(n, rig.vocab(), 1000u + uint32_t(j));
    o.pages = rig.pages_for(n);
    o.chunk = 1 + (j * 5) % 9;
  }
  int bad = 0;
  for (int done = 0; done < n;) {
    const int len = std::min(n - done, done == 0 && first_split > 0 ? first_split : chunk);
    ForwardBatch b;
    // Neighbours go before and after the checked sequence; they advance by
    // at most 9 tokens a step, so none runs out before it.
    auto add_neighbour = [&](Other& o) {
      b.add(o.pages, o.done, o.ids.data() + o.done, o.chunk, true);
      o.done += o.chunk;
    };
    for (int j = 0; j < neighbours / 2; ++j) add_neighbour(others[size_t(j)]);
    const int at = int(b.seqs.size());
    b.add(pages, done, ids.data() + done, len, true);
    for (int j = neighbours / 2; j < neighbours; ++j) add_neighbour(others[size_t(j)]);
    const std::vector<float> logits = rig.step(b);
    done += len;
    if (!same_bits(oracle[size_t(done - 1)], logits.data() + size_t(at) * rig.vocab())) ++bad;
  }
  return bad;
}

struct Case {
  std::string name;  // test name
  std::string arch;  // llama | qwen2 | qwen3; "" for the bundled model
  std::string type;  // weight type of a random model
  DType kv = DType::f16;
};

class BatchInvariance : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case& c = GetParam();
    std::string path = model::default_model_path();
    if (!c.arch.empty()) {
      rc::testing::RandomModelSpec s;
      s.arch = c.arch;
      s.type = c.type;
      s.dim = 256, s.heads = 4, s.kv_heads = c.arch == "qwen2" ? 1 : 2, s.ffn = 512;
      s.layers = 2, s.ctx = 1024, s.vocab = 400, s.chat_template = "";
      if (c.arch == "qwen3") s.head_dim = 64;
      path_ = (std::filesystem::temp_directory_path() /
               ("rc-invariance-" + c.name + "-" + std::to_string(::getpid()) + ".gguf"))
                  .string();
      ASSERT_TRUE(rc::testing::write_random_model(s, path_).ok());
      path = path_;
    }
    auto m = model::load_model(path);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(m).value();
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }

  std::unique_ptr<model::ModelFile> model_;
  std::string path_;
};

TEST_P(BatchInvariance, EveryScheduleGivesTheDecodeBits) {
  const DType kv = GetParam().kv;
  Rig oracle_rig(*model_, 2, 1, kv);
  const std::vector<int32_t> ids = prompt_ids(kPromptTokens, oracle_rig.vocab(), 11);
  const std::vector<std::vector<float>> oracle = one_token_per_step(oracle_rig, ids);

  for (int chunk : {7, 64, kMaxChunk}) {
    Rig rig(*model_, 2, 1, kv);
    EXPECT_EQ(chunked_mismatches(rig, ids, oracle, chunk, 0), 0) << "prefill chunks of " << chunk;
  }
  for (int neighbours = 1; neighbours <= 7; neighbours += 3) {
    Rig rig(*model_, 2, 1, kv);
    EXPECT_EQ(chunked_mismatches(rig, ids, oracle, 37, neighbours), 0)
        << "beside " << neighbours << " other sequences";
  }
  {
    Rig rig(*model_, 1, 1, kv);
    EXPECT_EQ(chunked_mismatches(rig, ids, oracle, 64, 0), 0) << "one thread";
    Rig decode_rig(*model_, 1, 1, kv);
    const std::vector<std::vector<float>> one = one_token_per_step(decode_rig, ids);
    int bad = 0;
    for (size_t i = 0; i < ids.size(); ++i) bad += same_bits(oracle[i], one[i].data()) ? 0 : 1;
    EXPECT_EQ(bad, 0) << "decode on one thread";
  }
  {
    Rig rig(*model_, 2, 16, kv);
    EXPECT_EQ(chunked_mismatches(rig, ids, oracle, 64, 2), 0) << "16-slot pages";
  }
  // A cache hit at a split point: the prefix computed by one request, the
  // rest by the next (the pool keeps the prefix's K/V as stored).
  for (int split : {1, 15, 16, 17, 255, 256, 257, kPromptTokens - 1}) {
    Rig rig(*model_, 2, 1, kv);
    EXPECT_EQ(chunked_mismatches(rig, ids, oracle, kMaxChunk, 0, split), 0) << "split at " << split;
  }
}

std::vector<Case> cases() {
  std::vector<Case> c;
  for (DType kv : {DType::f16, DType::bf16, DType::f32}) {
    const std::string k = kv == DType::f16 ? "f16" : kv == DType::bf16 ? "bf16" : "f32";
    c.push_back({"bundled_kv" + k, "", "", kv});
    for (const char* arch : {"llama", "qwen2", "qwen3"}) {
      for (const char* type : {"f16", "q8_0", "q4_k", "q5_k", "q6_k"}) {
        // Every weight type with the default KV type; the other KV types
        // with one float and one quantized type.
        if (kv != DType::f16 && std::string(type) != "f16" && std::string(type) != "q4_k") {
          continue;
        }
        c.push_back({std::string(arch) + "_" + type + "_kv" + k, arch, type, kv});
      }
    }
  }
  return c;
}

INSTANTIATE_TEST_SUITE_P(Models, BatchInvariance, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace rc::runtime

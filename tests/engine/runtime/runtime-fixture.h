// A scheduler over the bundled model (or any GGUF), assembled by hand so tests can reach
// the cache (check_integrity, stats) that the Engine keeps private.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu/cpu-backends.h"
#include "model/default-model.h"
#include "model/model-file.h"
#include "radixchat/cache.h"
#include "runtime/model-runner.h"
#include "runtime/scheduler.h"
#include "tokenizer/tokenizer.h"

namespace rc::runtime::testing {

struct Finished {
  FinishReason reason = FinishReason::none;
  std::vector<int32_t> tokens;
  std::string text;
  RequestMetrics metrics;
  int finish_order = -1;  // 0 for the first request to finish, and so on
};

class RuntimeRig {
 public:
  struct Options {
    std::string cache = "radix";  // radix | hash | off
    int page_size = 1;
    int64_t pool_tokens = 8192;
    SchedulerConfig sched;
    std::string model_path;  // empty: the bundled model (weights and vocabulary)
  };

  explicit RuntimeRig(const Options& o) {
    const std::string path = o.model_path.empty() ? model::default_model_path() : o.model_path;
    auto model = model::load_model(path);
    if (!model.ok()) throw std::runtime_error(model.status().to_string());
    model_ = std::move(model.value());
    auto tok = tok::Tokenizer::load(path);
    if (!tok.ok()) throw std::runtime_error(tok.status().to_string());
    tok_ = std::move(tok.value());
    const model::ModelConfig& c = model_->config;
    backend_ = kernels::make_cpu_backend(2);
    const int64_t pages = (o.pool_tokens + o.page_size - 1) / o.page_size;
    pool_ = backend_->make_kv_pool({c.n_layers, c.n_kv_heads, c.head_dim, o.page_size, pages});
    CacheConfig cc;
    cc.policy = parse_cache_policy(o.cache).value();
    cc.page_size = o.page_size;
    cc.total_pages = pages;
    cache_ = std::move(make_kv_cache(cc).value());
    // Drafted steps verify several positions of a request at once.
    const int rows =
        std::min(o.sched.max_batch_tokens,
                 o.sched.max_running + (o.sched.speculate ? DraftBudget::kMaxTokens + 1 : 0));
    runner_ = std::move(
        ModelRunner::create(*model_, *backend_, *pool_, o.sched.max_batch_tokens, rows).value());
    sched_ = std::make_unique<Scheduler>(o.sched, *cache_, *runner_, *tok_);
  }

  // Queues `prompt` (token ids) for generation of max_tokens tokens (greedy
  // unless `sampling` says otherwise).
  RequestId add(std::vector<int32_t> prompt, int max_tokens, const SamplingParams& sampling = {}) {
    GenerateRequest params;
    params.max_tokens = max_tokens;
    params.sampling = sampling;
    params.ignore_eos = true;
    const RequestId id = next_id_++;
    results_.emplace_back();
    const size_t slot = results_.size() - 1;
    auto cb = [this, slot](const StreamEvent& ev) {
      Finished& f = results_[slot];
      if (ev.token >= 0) f.tokens.push_back(ev.token);
      f.text += ev.text;
      if (ev.finished) {
        f.reason = ev.reason;
        f.metrics = ev.metrics;
        f.finish_order = finished_count_++;
      }
      return true;
    };
    sched_->add(std::make_unique<Request>(id, std::move(prompt), params, cb, *tok_));
    return id;
  }

  // Steps until idle (bounded so a scheduler bug fails instead of hanging).
  void run_to_completion(int max_steps = 100000) {
    for (int i = 0; i < max_steps && sched_->step(); ++i) {
      ASSERT_TRUE(cache_->check_integrity().ok()) << cache_->check_integrity().to_string();
    }
    ASSERT_EQ(sched_->running() + sched_->waiting(), 0u);
  }

  std::vector<int32_t> tokens_of(const std::string& text) const {
    return tok_->encode(text, true).value();
  }

  // Nothing locked or held: every page is free or evictable.
  void expect_all_released() const {
    const CacheStats s = cache_->stats();
    EXPECT_EQ(s.protected_pages, 0);
    EXPECT_EQ(s.held_pages, 0);
    EXPECT_EQ(s.free_pages + s.evictable_pages, s.total_pages);
    EXPECT_TRUE(cache_->check_integrity().ok()) << cache_->check_integrity().to_string();
  }

  Scheduler& sched() { return *sched_; }
  KvCache& cache() { return *cache_; }
  const Finished& result(RequestId id) const { return results_[id - 1]; }

 private:
  std::unique_ptr<model::ModelFile> model_;
  std::unique_ptr<tok::Tokenizer> tok_;
  std::unique_ptr<kernels::Backend> backend_;
  std::unique_ptr<kernels::KvPool> pool_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<ModelRunner> runner_;
  std::unique_ptr<Scheduler> sched_;
  std::deque<Finished> results_;
  RequestId next_id_ = 1;
  int finished_count_ = 0;
};

}  // namespace rc::runtime::testing

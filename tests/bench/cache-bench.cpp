// Google Benchmark program for the KV cache operations on a synthetic
// chat-like workload (shared system prompts, multi-turn conversations).
// `per_token` is time per key token (per evicted token for eviction).
// The trace replay with hit counts is `radixchat-cli cache-bench`.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include "radixchat/cache.h"

namespace rc {
namespace {

// Keys of a chat workload: 8 system prompts of 600 tokens; conversation c's
// turn t = system + the turns before it (each 120 tokens) + a new message.
struct Workload {
  std::vector<std::vector<Token>> keys;
  Workload(int conversations, int turns, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    auto tokens = [&](size_t n) {
      std::vector<Token> v(n);
      for (Token& t : v) t = Token(rng() % 32000);
      return v;
    };
    std::vector<std::vector<Token>> system;
    for (int s = 0; s < 8; ++s) system.push_back(tokens(600));
    for (int c = 0; c < conversations; ++c) {
      std::vector<Token> key = system[rng() % system.size()];
      for (int t = 0; t < turns; ++t) {
        auto msg = tokens(120);
        key.insert(key.end(), msg.begin(), msg.end());
        keys.push_back(key);
      }
    }
  }
  size_t tokens() const {
    size_t n = 0;
    for (const auto& k : keys) n += k.size();
    return n;
  }
};

std::unique_ptr<KvCache> make(CachePolicy policy, int ps, int64_t pool_tokens) {
  CacheConfig cfg;
  cfg.policy = policy;
  cfg.page_size = ps;
  cfg.total_pages = pool_tokens / ps;
  cfg.events = false;
  return std::move(make_kv_cache(cfg)).value();
}

// Insert every key (the protocol without locks), as a warm cache would hold.
void fill(KvCache& c, const Workload& w) {
  const size_t ps = size_t(c.config().page_size);
  std::vector<PageId> table;
  for (const auto& key : w.keys) {
    MatchResult m = c.match_prefix(key);
    const size_t aligned = key.size() / ps * ps;
    table = m.pages;
    if (!c.alloc_pages(int64_t(aligned / ps) - int64_t(m.pages.size()), table).ok()) continue;
    (void)c.insert(std::span(key.data(), aligned), table);
  }
}

void set_per_token(benchmark::State& state, double tokens_per_iteration) {
  state.counters["per_token"] =
      benchmark::Counter(tokens_per_iteration, benchmark::Counter::kIsIterationInvariantRate |
                                                   benchmark::Counter::kInvert);
}

void BM_Match(benchmark::State& state) {
  const int ps = int(state.range(0));
  Workload w(200, 6);
  auto c = make(CachePolicy(state.range(1)), ps, 1 << 22);
  fill(*c, w);
  for (auto _ : state)
    for (const auto& key : w.keys) benchmark::DoNotOptimize(c->match_prefix(key));
  set_per_token(state, double(w.tokens()));
}

void BM_InsertCold(benchmark::State& state) {  // every key new to the tree
  const int ps = int(state.range(0));
  Workload w(200, 6);
  auto c = make(CachePolicy(state.range(1)), ps, 1 << 22);
  std::vector<std::vector<PageId>> tables(w.keys.size());
  for (auto _ : state) {
    state.PauseTiming();
    (void)c->reset();
    // Pages for whole keys, as if nothing were shared (duplicates get freed).
    for (size_t i = 0; i < w.keys.size(); ++i) {
      tables[i].clear();
      if (!c->alloc_pages(int64_t(w.keys[i].size()) / ps, tables[i]).ok()) tables[i].clear();
    }
    state.ResumeTiming();
    for (size_t i = 0; i < w.keys.size(); ++i) {
      if (tables[i].empty()) continue;
      const size_t aligned = tables[i].size() * size_t(ps);
      benchmark::DoNotOptimize(c->insert(std::span(w.keys[i].data(), aligned), tables[i]));
    }
  }
  set_per_token(state, double(w.tokens()));
}

void BM_Evict(benchmark::State& state) {
  const int ps = int(state.range(0));
  Workload w(200, 6);
  auto c = make(CachePolicy(state.range(1)), ps, 1 << 22);
  int64_t evicted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fill(*c, w);
    state.ResumeTiming();
    evicted += c->evict(INT64_MAX);
  }
  state.counters["per_token"] = benchmark::Counter(
      double(evicted), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_LockUnlock(benchmark::State& state) {
  Workload w(50, 8);
  auto c = make(CachePolicy::radix, 1, 1 << 22);
  fill(*c, w);
  MatchResult m = c->match_prefix(w.keys.back());
  for (auto _ : state) {
    benchmark::DoNotOptimize(c->lock(m.node));
    benchmark::DoNotOptimize(c->unlock(m.node));
  }
}

// The full request protocol under memory pressure (pool = 1/4 of the
// distinct tokens), events on or off.
void BM_Requests(benchmark::State& state) {
  const int ps = int(state.range(0));
  const bool events = state.range(2) != 0;
  Workload w(200, 6);
  std::vector<PageId> table;
  std::vector<CacheEvent> drained;
  for (auto _ : state) {
    state.PauseTiming();
    CacheConfig cfg;
    cfg.policy = CachePolicy(state.range(1));
    cfg.page_size = ps;
    cfg.total_pages = 40000 / ps;
    cfg.events = events;
    auto c = std::move(make_kv_cache(cfg)).value();
    state.ResumeTiming();
    for (const auto& key : w.keys) {
      MatchResult m = c->match_prefix(key);
      (void)c->lock(m.node);
      table = m.pages;
      const int64_t need = (int64_t(key.size()) - m.tokens + ps - 1) / ps;
      if (c->alloc_pages(need, table).ok()) {
        const size_t aligned = key.size() / size_t(ps) * size_t(ps);
        (void)c->insert(std::span(key.data(), aligned),
                        std::span(table).first(aligned / size_t(ps)));
        (void)c->free_pages(std::span(table).subspan(aligned / size_t(ps)));
      }
      (void)c->unlock(m.node);
      if (events) {
        c->events().drain(drained);
        drained.clear();
      }
    }
    state.PauseTiming();
    c.reset();
    state.ResumeTiming();
  }
  set_per_token(state, double(w.tokens()));
}

void policies_and_pages(benchmark::internal::Benchmark* b) {
  for (int policy : {int(CachePolicy::radix), int(CachePolicy::hash)})
    for (int ps : {1, 16}) b->Args({ps, policy});
  b->ArgNames({"page", "policy"});
}

BENCHMARK(BM_Match)->Apply(policies_and_pages);
BENCHMARK(BM_InsertCold)->Apply(policies_and_pages);
BENCHMARK(BM_Evict)->Apply(policies_and_pages);
BENCHMARK(BM_LockUnlock);
BENCHMARK(BM_Requests)
    ->ArgNames({"page", "policy", "events"})
    ->Args({1, int(CachePolicy::radix), 0})
    ->Args({1, int(CachePolicy::radix), 1})
    ->Args({16, int(CachePolicy::radix), 0})
    ->Args({16, int(CachePolicy::hash), 0})
    ->Args({16, int(CachePolicy::off), 0});

}  // namespace
}  // namespace rc

BENCHMARK_MAIN();

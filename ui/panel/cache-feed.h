// Where the panel reads the cache from: an Engine (the app), or a bare
// KvCache (tests and the benchmark, no model needed). Both give a snapshot,
// the drained event stream, stats and a way to render tokens as text.
//
// Thread contract: the panel calls these on the GUI thread. The engine feed
// only uses Engine's thread-safe public API (docs/architecture.md section 12); the
// KvCache feed must be driven on the thread that owns the cache.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "panel/stats-history.h"
#include "radixchat/cache.h"
#include "radixchat/tier-stats.h"

namespace rc {
class Engine;
}

namespace rc::ui::panel {

class CacheFeed {
 public:
  virtual ~CacheFeed() = default;
  virtual CacheSnapshot snapshot() = 0;
  // Events since the previous call; `overflowed` set when some were lost.
  virtual std::vector<CacheEvent> drain(bool* overflowed) = 0;
  virtual CacheStats cache_stats() = 0;
  // Request totals for the plots; false without an engine.
  virtual bool request_totals(RequestTotals* out) {
    (void)out;
    return false;
  }
  // The cache tiers below the pool (EngineStats::tiers), as of the latest
  // cache_stats(); false when the source has none to report.
  virtual bool tier_stats(TierStats* out) {
    (void)out;
    return false;
  }
  virtual std::string detokenize(const std::vector<Token>& tokens) = 0;
  // For the demo scenarios; null for a bare cache.
  virtual rc::Engine* engine() { return nullptr; }
  // What the settings controls show: radix | radix-page16 | hash16 | off,
  // the pool in tokens, and a one-line description of the source.
  virtual std::string cache_setting() = 0;
  virtual int64_t pool_tokens() = 0;
  virtual std::string describe() = 0;
  // A remote cache (remote-feed.h): no locks, pool size, hit rate or
  // request timings reach the panel, which says so instead of drawing zeros.
  virtual bool remote() const { return false; }
  // A remote cache with several data-parallel ranks: the ranks present, and
  // the rank a node belongs to (-1: none, or a single-rank cache). The tree
  // view colours nodes by rank.
  virtual std::vector<int> ranks() const { return {}; }
  virtual int node_rank(NodeId id) const {
    (void)id;
    return -1;
  }
};

std::unique_ptr<CacheFeed> make_engine_feed(rc::Engine& engine);

// `span_text` renders tokens for labels; default: printable ASCII ids as
// characters (test workloads use them), others as "<id>".
std::unique_ptr<CacheFeed> make_kv_cache_feed(
    KvCache& cache, std::function<std::string(const std::vector<Token>&)> span_text = {});

}  // namespace rc::ui::panel

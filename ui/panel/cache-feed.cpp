#include "panel/cache-feed.h"

#include "radixchat/engine.h"

namespace rc::ui::panel {

namespace {

class EngineFeed final : public CacheFeed {
 public:
  explicit EngineFeed(Engine& e) : e_(e) {}
  CacheSnapshot snapshot() override { return e_.cache_snapshot(); }
  std::vector<CacheEvent> drain(bool* overflowed) override { return e_.drain_events(overflowed); }
  CacheStats cache_stats() override {
    stats_ = e_.stats();
    return stats_.cache;
  }
  bool request_totals(RequestTotals* out) override {
    // cache_stats() runs first each frame and refreshed stats_.
    out->finished = stats_.requests_finished;
    out->prompt_tokens = stats_.prompt_tokens;
    out->cached_tokens = stats_.cached_tokens;
    out->ttft_ms_mean = stats_.ttft_ms_mean;
    return true;
  }
  bool tier_stats(TierStats* out) override {
    if (!stats_.tiers.enabled) return false;
    *out = stats_.tiers;
    return true;
  }
  std::string detokenize(const std::vector<Token>& tokens) override {
    return e_.detokenize(tokens);
  }
  Engine* engine() override { return &e_; }
  std::string cache_setting() override { return e_.model_info().cache; }
  int64_t pool_tokens() override { return e_.model_info().kv_pool_tokens; }
  std::string describe() override {
    const ModelInfo& m = e_.model_info();
    return m.name + " on " + m.device;
  }

 private:
  Engine& e_;
  EngineStats stats_;
};

std::string ascii_ids(const std::vector<Token>& tokens) {
  std::string s;
  for (Token t : tokens) {
    if (t >= 32 && t < 127) {
      s += char(t);
    } else {
      s += '<';
      s += std::to_string(t);
      s += '>';
    }
  }
  return s;
}

class KvCacheFeed final : public CacheFeed {
 public:
  KvCacheFeed(KvCache& c, std::function<std::string(const std::vector<Token>&)> f)
      : c_(c), text_(f ? std::move(f) : ascii_ids) {}
  CacheSnapshot snapshot() override {
    // Events queued before the snapshot are reflected in it; drop them so
    // the first drain after a resync starts near next_seq.
    std::vector<CacheEvent> stale;
    c_.events().drain(stale);
    return c_.snapshot();
  }
  std::vector<CacheEvent> drain(bool* overflowed) override {
    std::vector<CacheEvent> out;
    const bool lost = c_.events().drain(out);
    if (overflowed) *overflowed = lost;
    return out;
  }
  CacheStats cache_stats() override { return c_.stats(); }
  std::string detokenize(const std::vector<Token>& tokens) override { return text_(tokens); }
  std::string cache_setting() override {
    const CacheConfig& cfg = c_.config();
    if (cfg.policy == CachePolicy::off) return "off";
    if (cfg.policy == CachePolicy::hash) return "hash16";
    return cfg.page_size == 16 ? "radix-page16" : "radix";
  }
  int64_t pool_tokens() override { return c_.config().total_pages * c_.config().page_size; }
  std::string describe() override { return "a bare KV cache (no model)"; }

 private:
  KvCache& c_;
  std::function<std::string(const std::vector<Token>&)> text_;
};

}  // namespace

std::unique_ptr<CacheFeed> make_engine_feed(Engine& engine) {
  return std::make_unique<EngineFeed>(engine);
}

std::unique_ptr<CacheFeed> make_kv_cache_feed(
    KvCache& cache, std::function<std::string(const std::vector<Token>&)> span_text) {
  return std::make_unique<KvCacheFeed>(cache, std::move(span_text));
}

}  // namespace rc::ui::panel

// Time series for the panel's plots: token hit rate, mean matched prefix
// length and time to first token, one point per batch of finished requests.
//
// The engine publishes cumulative totals (EngineStats); a plot of cumulative
// means flattens out after a few requests and hides what a scenario just did,
// so each point is the mean over the requests that finished since the
// previous point, recovered from the differences of the totals. Without an
// engine (a bare KvCache in tests and the benchmark) the cache's own match
// counters give hit rate and matched length. GUI thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "radixchat/cache.h"

namespace rc::ui::panel {

// The subset of EngineStats the plots need (kept engine-free for tests).
struct RequestTotals {
  uint64_t finished = 0;
  uint64_t prompt_tokens = 0;
  uint64_t cached_tokens = 0;
  double ttft_ms_mean = 0;
};

class StatsHistory {
 public:
  explicit StatsHistory(size_t capacity = 120) : capacity_(capacity) {}

  // Call once per frame. `requests` is null without an engine. A point is
  // added when requests (or, without an engine, match calls) advanced and at
  // least `min_interval` seconds passed since the previous point.
  void observe(const RequestTotals* requests, const CacheStats& cache, double now,
               double min_interval = 0.25);
  void clear();
  // A new source (the engine was recreated for another policy or pool):
  // its counters start from zero. The points so far stay, so the plots
  // compare before and after, and a marker labelled `label` is set at `now`.
  void restart(const std::string& label, double now);

  struct Marker {
    double at = 0;  // caller seconds
    std::string label;
  };

  const std::vector<float>& hit_rate() const { return hit_rate_; }    // 0..1
  const std::vector<float>& matched_len() const { return matched_; }  // tokens
  const std::vector<float>& ttft_ms() const { return ttft_; }         // empty without engine
  size_t points() const { return hit_rate_.size(); }
  // When each point was taken (caller seconds), parallel to the series.
  const std::vector<double>& times() const { return times_; }
  // Source changes within the kept span (older ones are dropped with the
  // points they preceded).
  const std::vector<Marker>& markers() const { return markers_; }

 private:
  void push(std::vector<float>& v, float x);
  void stamp(double now);

  size_t capacity_;
  bool primed_ = false;
  double last_at_ = 0;
  RequestTotals prev_req_;
  uint64_t prev_calls_ = 0, prev_prompt_ = 0, prev_hit_ = 0;
  std::vector<float> hit_rate_, matched_, ttft_;
  std::vector<double> times_;
  std::vector<Marker> markers_;
};

}  // namespace rc::ui::panel

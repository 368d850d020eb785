#include "bench-print.h"

#include <cstdio>

#include "bench-tiers.h"

namespace rc::cli {

const BenchResult* find_off(const std::vector<BenchResult>& rs) {
  for (const BenchResult& r : rs)
    if (r.cache == "off") return &r;
  return nullptr;
}

nlohmann::json to_json(const BenchResult& r) {
  return {{"workload", r.workload},
          {"cache", r.cache},
          {"evict", r.eviction},
          {"requests", r.requests},
          {"temperature", r.temperature},
          {"prompt_tokens", r.prompt_tokens},
          {"cached_tokens", r.cached_tokens},
          {"computed_tokens", r.prompt_tokens - r.cached_tokens},
          {"output_tokens", r.output_tokens},
          {"document_tokens", r.document_tokens},
          {"cached_document_tokens", r.cached_document_tokens},
          {"hit_rate", r.hit_rate()},
          {"avg_match_len", r.requests ? double(r.cached_tokens) / r.requests : 0.0},
          {"ttft_ms_p50", r.percentile(0.5)},
          {"ttft_ms_p99", r.percentile(0.99)},
          {"later_turns_ttft_ms_p50", BenchResult::percentile_of(r.later_ttft_ms, 0.5)},
          {"output_tok_s", r.output_tok_s()},
          {"total_tok_s", r.total_tok_s()},
          {"wall_s", r.wall_s},
          {"kv_peak_bytes", r.kv_peak_bytes},
          {"evictions", r.evictions},
          {"replies_digest", r.replies_digest()},
          {"speculate", r.speculate},
          {"decode_tok_s", r.decode_tok_s()},
          {"later_turns_decode_tok_s", r.later_decode_tok_s()},
          {"drafted_tokens", r.drafted_tokens},
          {"accepted_tokens", r.accepted_tokens},
          {"mean_accepted_len", r.mean_accepted_len()},
          {"draft_overhead",
           r.drafted_tokens ? double(r.drafted_tokens - r.accepted_tokens) / double(r.output_tokens)
                            : 0.0},
          {"tiers", r.tiers},
          {"tier_stats", tier_json(r.tier_stats)},
          {"before_restart_ttft_ms_p50", r.before_restart_ttft_ms_p50}};
}

void print_table(const std::vector<BenchResult>& rs) {
  std::printf("%-14s %-13s %5s %8s %8s %6s %9s %9s %9s %9s %11s %9s\n", "workload", "cache", "reqs",
              "prompt", "cached", "hit%", "TTFT p50", "TTFT p99", "out tok/s", "tot tok/s",
              "KV peak MB", "evictions");
  for (const BenchResult& r : rs) {
    std::printf("%-14s %-13s %5d %8lld %8lld %5.1f%% %7.1fms %7.1fms %9.1f %9.1f %11.2f %9llu\n",
                r.workload.c_str(), r.cache.c_str(), r.requests, (long long)r.prompt_tokens,
                (long long)r.cached_tokens, 100 * r.hit_rate(), r.percentile(0.5),
                r.percentile(0.99), r.output_tok_s(), r.total_tok_s(), r.kv_peak_bytes / 1048576.0,
                (unsigned long long)r.evictions);
  }
}

std::vector<std::string> settings_with_other_replies(const std::vector<BenchResult>& rs) {
  std::vector<std::string> differ;
  const BenchResult* off = find_off(rs);
  for (const BenchResult& r : rs)
    if (off && &r != off && r.replies != off->replies) differ.push_back(r.cache);
  return differ;
}

// Radix vs off: measured TTFT and throughput gains. "TTFT ratio" is off's
// TTFT p50 over this setting's (first-token latency, queueing and decode
// steps of batched requests included); "bound" is the prefill speed-up the
// hit rate alone predicts (prompt tokens / computed tokens).
void print_comparison(const std::vector<BenchResult>& rs) {
  const BenchResult* off = find_off(rs);
  if (!off) return;
  std::printf("\n%-13s %14s %17s %12s %16s %12s\n", "vs off", "TTFT p50 cut", "TTFT p50 ratio",
              "(hit bound)", "throughput gain", "same replies");
  for (const BenchResult& r : rs) {
    if (&r == off) continue;
    const double computed = double(r.prompt_tokens - r.cached_tokens);
    const double bound = computed > 0 ? r.prompt_tokens / computed : 0;
    const double p50 = r.percentile(0.5), off_p50 = off->percentile(0.5);
    std::printf("%-13s %13.1f%% %16.2fx %11.2fx %15.2fx %12s\n", r.cache.c_str(),
                off_p50 > 0 ? 100 * (1 - p50 / off_p50) : 0.0, p50 > 0 ? off_p50 / p50 : 0.0, bound,
                off->total_tok_s() > 0 ? r.total_tok_s() / off->total_tok_s() : 0.0,
                r.replies == off->replies ? "yes" : "NO");
  }
}

std::vector<std::string> tiers_with_other_replies(const std::vector<BenchResult>& rs) {
  std::vector<std::string> differ;
  for (const BenchResult& r : rs)
    if (r.replies != rs.front().replies) differ.push_back(r.tiers);
  return differ;
}

void print_tier_table(const std::vector<BenchResult>& rs) {
  std::printf("\n%-7s %9s %9s %11s %8s %10s %10s\n", "tiers", "TTFT p50", "TTFT p99", "loaded tok",
              "loads", "recomputes", "same reply");
  for (const BenchResult& r : rs) {
    std::printf("%-7s %7.1fms %7.1fms %11llu %8llu %10llu %10s\n", r.tiers.c_str(),
                r.percentile(0.5), r.percentile(0.99),
                (unsigned long long)r.tier_stats.loaded_tokens,
                (unsigned long long)r.tier_stats.loads, (unsigned long long)r.tier_stats.recomputes,
                r.replies == rs.front().replies ? "yes" : "NO");
  }
}

}  // namespace rc::cli

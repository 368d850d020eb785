// One `radixchat-cli bench` run's figures (cmd-bench.cpp fills it, request
// by request, from the engine's metrics; bench-print.h prints it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "radixchat/documents.h"
#include "radixchat/engine.h"
#include "radixchat/tier-stats.h"

namespace rc::cli {

struct BenchResult {
  std::string workload, cache;
  std::string tiers = "";  // the tier setting, when --tiers was given
  int requests = 0;
  double temperature = 0;
  int64_t prompt_tokens = 0, cached_tokens = 0, output_tokens = 0;
  int64_t document_tokens = 0, cached_document_tokens = 0;
  double wall_s = 0;
  std::vector<double> ttft_ms;
  std::vector<double> later_ttft_ms;  // turns after a conversation's first
  int64_t kv_peak_bytes = 0;
  uint64_t evictions = 0;
  std::string eviction;  // --evict
  std::string speculate;
  uint64_t drafted_tokens = 0, accepted_tokens = 0, draft_steps = 0;
  double decode_s = 0;  // summed over requests: first token -> finished
  // The same for turns after a conversation's first (a regeneration, the
  // next agent step): what drafts from the tree can speed up.
  int later_requests = 0;
  int64_t later_output_tokens = 0;
  double later_decode_s = 0;
  std::vector<std::string> replies;                // in request order, to check settings agree
  std::vector<std::vector<int32_t>> reply_tokens;  // the same, as generated ids
  TierStats tier_stats;
  double before_restart_ttft_ms_p50 = -1;  // reopen: the first turns, before the restart

  double percentile(double p) const { return percentile_of(ttft_ms, p); }
  static double percentile_of(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
  }
  double hit_rate() const { return prompt_tokens ? double(cached_tokens) / prompt_tokens : 0; }
  double output_tok_s() const { return wall_s > 0 ? output_tokens / wall_s : 0; }
  double total_tok_s() const { return wall_s > 0 ? (prompt_tokens + output_tokens) / wall_s : 0; }
  // Tokens after the first over the time spent producing them, per request
  // summed: what drafted decoding speeds up.
  double decode_tok_s() const {
    return decode_s > 0 ? double(output_tokens - requests) / decode_s : 0;
  }
  double later_decode_tok_s() const {
    return later_decode_s > 0 ? double(later_output_tokens - later_requests) / later_decode_s : 0;
  }
  // Adds a finished request of turn `turn` of its conversation, whose
  // documents (if any) went where `docs` says.
  void add_finished(const RequestMetrics& m, size_t turn, const PlacedDocuments& docs) {
    const double decode = (m.total_ms - m.ttft_ms) / 1000.0;
    prompt_tokens += m.prompt_tokens;
    cached_tokens += m.cached_tokens;
    output_tokens += m.output_tokens;
    document_tokens += docs.tokens;
    cached_document_tokens += docs.cached(m.cached_tokens);
    ttft_ms.push_back(m.ttft_ms);
    decode_s += decode;
    if (turn == 0) return;
    later_ttft_ms.push_back(m.ttft_ms);
    ++later_requests;
    later_output_tokens += m.output_tokens;
    later_decode_s += decode;
  }
  double mean_accepted_len() const {
    return draft_steps ? double(accepted_tokens) / draft_steps : 0;
  }
  // FNV-1a over the replies in request order, so runs can be compared by
  // their JSON alone.
  std::string replies_digest() const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const std::string& r : replies) {
      for (unsigned char c : r + '\0') h = (h ^ c) * 0x100000001b3ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
    return hex;
  }
};

}  // namespace rc::cli

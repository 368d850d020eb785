// `cache-report` over a recording: hit-rate summary, why each missing
// request missed (miss-analysis.h, against the tree at its match event) and
// the prompt-layout advisor.
//
// Advisor: misses that diverge at the same point of the same prefix and
// realign on a long shared part after a short span are one finding: a
// span that varies between prompts (a date, a user name, a request id in a
// system prompt). Its estimate is a what-if: every recorded request is
// replayed, one at a time in match order, through a fresh cache of the
// recording's policy, page size and pool, once as recorded and once with
// the span moved after the shared part; the difference in matched tokens
// is what moving it saves. One-at-a-time is exact for a sequential client;
// with concurrent clients it is an upper bound (in the engine a request's
// prefix is cached only once it is computed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recording/miss-analysis.h"
#include "recording/recording-reader.h"

namespace rc::recording {

struct ReportOptions {
  // miss.closing_tokens: used when the recording does not say its
  // template's (recorded_closing_tokens); the recording's count wins.
  MissOptions miss;
  int64_t min_shared = 16;  // tokens after the span that must be shared
  size_t max_findings = 5;
};

struct RequestMiss {
  uint64_t id = 0;
  uint64_t at_seq = 0;         // the tree it was compared with: before this event
  int64_t matched_tokens = 0;  // as the engine reported
  MissExplanation why;
};

struct SpanFinding {
  int64_t position = 0;               // divergence index in the prompt
  std::vector<int32_t> before;        // up to 16 tokens before the span
  std::vector<int32_t> example_span;  // one request's span
  std::vector<int32_t> other_span;    // what the cached path had there
  std::vector<int32_t> shared_after;  // the shared part the span is moved past
  int64_t misses = 0;                 // requests that diverged here
  int64_t requests_moved = 0;         // requests the what-if rewrote
  double mean_span_tokens = 0;
  int64_t sim_hit_tokens_before = 0;  // what-if baseline (as recorded)
  int64_t sim_hit_tokens_after = 0;   // with the span moved
  int64_t tokens_saved = 0;           // after - before
  double hit_rate_before = 0, hit_rate_after = 0;
};

struct CacheReport {
  RecordingSummary summary;
  int64_t requests = 0, finished = 0;
  int64_t prompt_tokens = 0, matched_tokens = 0;  // engine-reported, finished requests
  double hit_rate = 0;
  int64_t sim_hit_tokens = 0;         // the what-if baseline, to compare with matched_tokens
  std::vector<RequestMiss> misses;    // requests that matched less than their prompt
  std::vector<SpanFinding> findings;  // most tokens saved first
};

Result<CacheReport> make_cache_report(const Recording& rec, const ReportOptions& options = {});

}  // namespace rc::recording

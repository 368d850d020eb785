// The prompt-layout advisor of cache-report.h: groups misses into varying
// spans and estimates, by a what-if replay through a fresh cache, what
// moving each span after the shared part saves.
#pragma once

#include <functional>
#include <vector>

#include "recording/cache-report.h"

namespace rc::recording {

struct LayoutAdvice {
  int64_t baseline_hit_tokens = 0;  // the what-if replay of the requests as recorded
  std::vector<SpanFinding> findings;
};

Result<LayoutAdvice> advise_layout(const RecordingSummary& summary,
                                   const std::vector<RequestRecord>& requests,
                                   const std::vector<RequestMiss>& misses,
                                   const ReportOptions& options);

// Matched tokens when `requests` (finished ones, in match order) run one at
// a time through a fresh cache shaped like the recording's, each prompt
// passed through `rewrite` first (identity when unset). Exposed for tests.
Result<int64_t> simulate_hits(
    const RecordingSummary& summary, const std::vector<RequestRecord>& requests,
    const std::function<bool(const std::vector<int32_t>&, std::vector<int32_t>&)>& rewrite);

}  // namespace rc::recording

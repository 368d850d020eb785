// `bench --planted-span system|user`: a workload with a span that differs
// in every conversation (five random words on a line of its own, like a
// date, a user name or a request id), planted inside the system prompt
// ("system": right after its first line, so the rest of the system prompt
// is no longer shared) or moved to the start of the user's first message
// ("user": the fixed layout). The same seed plants the same spans, so the
// two runs differ only in where the span sits: the pair that checks the
// prompt-layout advisor of `cache-report` (recording/cache-report.h).
#pragma once

#include <cstdint>
#include <string>

#include "bench-workloads.h"

namespace rc::cli {

// invalid_argument for another `where`, or a workload without a system
// prompt to plant into.
Status plant_span(Workload& w, const std::string& where, uint64_t seed);

}  // namespace rc::cli

// Engine::forget on the engine thread (docs/architecture.md section 8):
// the tree first (KvCache::forget), then the tier blocks of the prefixes
// only the gone prompts had.
#pragma once

#include <cstdint>
#include <vector>

#include "radixchat/cache.h"
#include "radixchat/engine.h"
#include "tiers/kv-tiers.h"

namespace rc::runtime {

// A block of a gone or dropped path is erased from the tiers unless a kept
// path has the same block (the same prefix: keys chain) or the tree still
// holds that prefix whole (a node a request, a pin or a kept path saved).
// `tiers` may be null (no tiers). Engine thread; waits for queued tier writes.
ForgetResult forget_prefixes(KvCache& cache, tiers::KvTiers* tiers,
                             const std::vector<std::vector<int32_t>>& gone,
                             const std::vector<std::vector<int32_t>>& kept);

}  // namespace rc::runtime

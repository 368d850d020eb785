// Engine::forget and Engine::forget_document on the engine thread
// (docs/architecture.md sections 8 and 21): the tree first
// (KvCache::forget), then the tier blocks of the prefixes only the gone
// prompts had.
#pragma once

#include <cstdint>
#include <vector>

#include "radixchat/cache.h"
#include "radixchat/engine.h"
#include "tiers/kv-tiers.h"
#include "tiers/token-windows.h"

namespace rc::runtime {

// A block of a gone or dropped path is erased from the tiers unless a kept
// path has the same block (the same prefix: keys chain) or the tree still
// holds that prefix whole (a node a request, a pin or a kept path saved).
// `tiers` may be null (no tiers). Engine thread; waits for queued tier writes.
ForgetResult forget_prefixes(KvCache& cache, tiers::KvTiers* tiers,
                             const std::vector<std::vector<int32_t>>& gone,
                             const std::vector<std::vector<int32_t>>& kept);

// A removed document: every path of the tree that holds a run of
// `windows`' needle is gone from a margin before its first run on (the
// document's header and the tokens a tokenizer splits differently at its
// edge), and the prefix before that margin is kept; forget_prefixes does
// the rest. Then the tiers' sweep (KvTiers::erase_holding) erases the
// blocks holding it in layouts the tree no longer has. Pins must be
// released first (Scheduler::unpin_holding): a pinned path is not dropped.
// An error only when a tier could not be swept whole.
Result<ForgetResult> forget_holding(KvCache& cache, tiers::KvTiers* tiers,
                                    const tiers::TokenWindows& windows);

// Tokens kept before a document's first matching run: its header
// ("### Document: NAME") and a few tokens of its start fit inside.
inline constexpr size_t kDocumentMarginTokens = 32;

}  // namespace rc::runtime

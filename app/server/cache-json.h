// The KV cache as JSON, for GET /v1/cache and /v1/cache/events.
//
// Node: {"id", "parent" (null for the root), "token_count", "tokens",
//        "text", "pages", "lock_ref", "pin_ref", "pinned", "last_access",
//        "hits"}. "text" is the node's own span decoded on its own, so a
//        span that starts inside a word or a UTF-8 character reads oddly;
//        the token ids are exact.
// Event: {"type" (insert, split, merge, match, lock, unlock, evict, reset,
//        pin, unpin), "seq", "node", "parent", "other", "token_count",
//        "page_count", "tick"}, plus "tokens", "pages" and "text" on
//        insert. Absent node ids are null. Replay rules: cache-events.h.
// Snapshot: {"policy", "page_size", "total_pages", "tick", "next_seq",
//        "nodes": [...], "stats": {...}}.
//
// Pure functions of their input; any thread.
#pragma once

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "radixchat/cache.h"

namespace rc::server {

// Token ids -> text (Engine::detokenize).
using TokenDecoder = std::function<std::string(const std::vector<Token>&)>;

struct CacheJsonOptions {
  bool tokens = true;  // token id arrays
  bool text = true;    // decoded spans (needs a decoder)
  bool pages = true;   // page id arrays
};

nlohmann::json cache_stats_json(const CacheStats& stats);
nlohmann::json cache_snapshot_json(const CacheSnapshot& snapshot, const TokenDecoder& decode,
                                   const CacheJsonOptions& options = {});
nlohmann::json cache_event_json(const CacheEvent& event, const TokenDecoder& decode);

}  // namespace rc::server

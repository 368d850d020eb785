// The radix cache's eviction policies (CacheConfig::eviction,
// EngineConfig::eviction).
#pragma once

namespace rc {

// Which unlocked leaf of the radix tree evict() takes first
// (docs/architecture.md section 4); pinned leaves go last either way.
//   lru   the least recently used.
//   gdsf  greedy-dual-size-frequency (RAGCache's policy): the lowest
//         L + hits, where hits counts the requests that matched through the
//         leaf and L is the priority of the last leaf evicted, so what was
//         popular long ago ages out; ties go least recently used. A leaf's
//         recompute cost is taken as proportional to its tokens, so cost
//         per token drops out; a leaf is only evicted after its children,
//         so its hits count every request below it (prefix-aware).
// The hash policy always evicts LRU. Names: radixchat/engine-config.h
// (setting_name, parse_eviction_setting).
enum class Eviction { lru, gdsf };

}  // namespace rc

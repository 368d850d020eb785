// The cache's blocks as KV events with their tier in vLLM's `medium` field.
//
// vLLM tags each BlockStored / BlockRemoved with where the block lives:
// "GPU" for the device pool, "CPU" for blocks its offloading connector
// copied to host memory. RadixChat's pool is "GPU" on CUDA and "CPU" on the
// CPU backend (pool_medium()); the tiers below it (docs/architecture.md
// section 8) are "CPU" for the host tier under a GPU pool ("HOST" under a
// CPU pool), "DISK" and "REDIS" (tier_medium()).
//
// TieredBlockMapper wraps CacheBlockMapper (radixchat/kv-cache-blocks.h),
// which maps cache events to blocks without a medium, and:
//   - tags every BlockStored and BlockRemoved of the pool with the pool's
//     medium;
//   - on a demote event (a leaf about to be evicted whose leading tokens the
//     tiers hold), follows the eviction's BlockRemoved(pool) with a
//     BlockStored(lower medium) of the blocks the tiers hold: a subscriber
//     sees them sink instead of vanishing;
//   - on a promote, nothing more: the insert before it already published
//     BlockStored(pool) for the loaded blocks, and the tiers keep their copy
//     (write-through), so no BlockRemoved(lower) is due; the same hashes
//     simply reappear with the pool's medium.
// Evictions inside a tier (its own LRU) produce no cache event, so a
// subscriber may keep lower-tier blocks a tier has since dropped.
//
// Thread contract: single-threaded, like CacheBlockMapper.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "radixchat/engine.h"
#include "radixchat/kv-cache-blocks.h"

namespace rc::kv_events {

// "GPU" for a CUDA pool, "CPU" otherwise.
std::string pool_medium(const ModelInfo& info);
// The medium of the fastest tier that is up (where a load would come from);
// "" without tiers.
std::string tier_medium(const TierStats& tiers, const std::string& pool);

class TieredBlockMapper {
 public:
  TieredBlockMapper(std::string pool_medium, std::string lower_medium);

  // As CacheBlockMapper::reset / apply, with mediums (see above).
  std::vector<Event> reset(const CacheSnapshot& snap);
  bool apply(const CacheEvent& ev, std::vector<Event>& out);

  const CacheBlockMapper& blocks() const { return mapper_; }
  void set_lower_medium(std::string medium) { lower_ = std::move(medium); }

 private:
  struct Node {
    NodeId parent = kNoNode;
    std::vector<Token> tokens;
  };
  // Keeps nodes_ in step with the event (the tokens and parents a demoted
  // leaf's BlockStored needs); false when it cannot.
  bool mirror(const CacheEvent& ev);
  std::vector<Token> path_tokens(NodeId id) const;

  CacheBlockMapper mapper_;
  std::string pool_, lower_;
  std::unordered_map<NodeId, Node> nodes_;
  std::unordered_map<NodeId, uint32_t> demoted_;  // leaf -> tokens held below, until its evict
};

}  // namespace rc::kv_events

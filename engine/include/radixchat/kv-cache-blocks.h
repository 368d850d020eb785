// RadixChat's own cache seen as KV-event blocks, so `serve --kv-events` can
// publish it in the vLLM/SGLang format (radixchat/kv-events.h).
//
// One page is one block. A block's hash is chained like vLLM's: a 64-bit
// hash of the parent block's hash and the block's token ids (the first block
// of a path hashes a fixed seed instead of a parent), so the same prefix
// always gets the same hashes and a router can compare servers.
//
// The mapper keeps a mirror of the tree (node -> parent, span, block
// hashes), fed by the engine's CacheEvents in seq order after a snapshot
// (cache-events.h replay contract). Splits and merges only regroup blocks
// between nodes, so they publish nothing; an insert publishes BlockStored
// for the new span's pages, an evict BlockRemoved for the evicted node's,
// a reset AllBlocksCleared. A subscriber applying the published events
// therefore holds exactly one block per cached page.
//
// Thread contract: single-threaded; the owner (the publisher thread) feeds it.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "radixchat/cache.h"
#include "radixchat/kv-events.h"

namespace rc::kv_events {

class CacheBlockMapper {
 public:
  // Seeds the mirror from `snap` and returns the events that take any
  // subscriber to it: AllBlocksCleared, then one BlockStored per node, each
  // after its parent's. Used at start and after a resync.
  std::vector<Event> reset(const CacheSnapshot& snap);

  // Applies one cache event (seq >= the snapshot's next_seq, in order),
  // appending the KV events it maps to. False when the mirror cannot follow
  // (an unknown node, a span that is not whole pages): resync from a new
  // snapshot with reset().
  bool apply(const CacheEvent& ev, std::vector<Event>& out);

  int page_size() const { return page_size_; }
  size_t blocks() const { return blocks_; }

  // The chained block hash: parent == nullopt for a path's first block.
  static BlockHash block_hash(const std::optional<BlockHash>& parent,
                              std::span<const Token> tokens);

 private:
  struct Node {
    NodeId parent = kNoNode;
    std::vector<Token> tokens;
    std::vector<BlockHash> hashes;  // one per page of `tokens`
  };
  // The hash a child of `id` chains from: its last block's (nullopt at root).
  std::optional<BlockHash> tail_hash(NodeId id) const;
  bool add_node(NodeId id, NodeId parent, const std::vector<Token>& tokens, Event* stored);

  int page_size_ = 1;
  size_t blocks_ = 0;
  std::unordered_map<NodeId, Node> nodes_;
};

}  // namespace rc::kv_events

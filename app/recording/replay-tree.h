// A radix tree rebuilt from a snapshot plus cache events, following the
// replay contract of radixchat/cache-events.h. Used by the recorder (to
// write snapshots of its own between the engine's, and to tell which
// request a match belongs to) and by the recording reader (to rebuild the
// tree at any event seq).
//
// Single-threaded value type; no engine calls.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "radixchat/cache.h"

namespace rc::recording {

class ReplayTree {
 public:
  // Replaces the state with `snap` (nodes, tick, next_seq, policy).
  void reset(const CacheSnapshot& snap);

  // Applies `e` when e.seq == next_seq(). Returns an empty string on
  // success, else why not (older seq: "old", a gap, or a node the tree does
  // not have); the tree is unchanged then.
  std::string apply(const CacheEvent& e);

  uint64_t next_seq() const { return next_seq_; }
  bool valid() const { return valid_; }
  // The node list as CacheSnapshot::nodes holds it (sorted by id).
  std::vector<CacheNodeInfo> nodes() const;
  // `snap`'s header (policy, page size, pool) with this tree's nodes, tick
  // and next_seq; stats are left as the header had them.
  CacheSnapshot to_snapshot(const CacheSnapshot& header) const;
  // Tokens from the root to the end of `id` (empty for the root or an
  // unknown node).
  std::vector<Token> path_tokens(NodeId id) const;
  size_t size() const { return nodes_.size(); }

 private:
  CacheNodeInfo* find(NodeId id);
  void touch_to_root(NodeId id, uint64_t tick, bool count_hit);
  void add_ref_to_root(NodeId id, bool pin, int delta);

  std::unordered_map<NodeId, CacheNodeInfo> nodes_;
  uint64_t next_seq_ = 0;
  uint64_t tick_ = 0;
  bool valid_ = false;
};

}  // namespace rc::recording

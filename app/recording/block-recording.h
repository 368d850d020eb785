// `cache-watch --record FILE`: a remote cache followed as KV-event blocks
// (kv_events::Batch from a vLLM/SGLang/Dynamo publisher or a RadixChat
// server, app/kv-events/block-feed.h) written as a recording
// (recording-format.h), so cache-report, cache-export and the panel open it
// like a recording of the local engine.
//
// KV events carry blocks, not the engine's node events, so they are mapped:
//  - One recording node per block held: its tokens are the block's, one
//    page per block (page ids are arrival numbers: publishers send no block
//    ids). Node ids are assigned here.
//  - A node's parent is its parent block's node when that block is held,
//    else the root: the forest `cache-watch` prints, where such a block is a
//    root. Data-parallel ranks share the one root (meta 'ranks' lists them).
//  - BlockStored: one insert event per block, parents first.
//  - BlockRemoved of a leaf: one evict event. Of a block that still has
//    children (the block tree shows them as roots from then on): the
//    block's subtree is evicted leaf first and each child's subtree is
//    inserted again under the root, with new node ids. A block stored after
//    children that name it (they arrived first, at the root) adopts them
//    the same way: evicted at the root, inserted again under it. A stored
//    block that is already held with other tokens or parent is a removal
//    followed by a store, as the block tree treats it.
//  - AllBlocksCleared: one reset event when only that rank holds blocks,
//    else evict events for that rank's blocks.
//  - A block sent without token ids gets no node (an insert needs tokens);
//    blocks naming it stay at the root. A forged parent cycle, which the
//    block tree never walks, stays at the root too.
//  - Nothing maps to match, lock or pin events (remote feeds send no
//    matches, locks or requests): hits, lock counts and the requests table
//    stay empty, and last_access counts events, not the remote's clock.
// Every event is applied to a replay tree (replay-tree.h) as it is made, so
// what is written replays by construction and tree() is what was recorded.
//
// Thread contract: one thread (the feed's owner) calls everything.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "radixchat/kv-events.h"
#include "recording/recorder.h"
#include "recording/replay-tree.h"

namespace rc::recording {

class BlockRecording {
 public:
  // Records the empty tree (next_seq 0) as the first snapshot.
  explicit BlockRecording(Recorder& recorder);
  BlockRecording(const BlockRecording&) = delete;
  BlockRecording& operator=(const BlockRecording&) = delete;

  // Maps and records one batch, as the block tree applied it.
  void apply(const kv_events::Batch& batch);
  // Records the current tree as a last snapshot (source 'cache-watch').
  void finish();

  const ReplayTree& tree() const { return tree_; }
  // Blocks moved to or from the root by a removal or adoption.
  uint64_t reinserted_blocks() const { return reinserted_; }

 private:
  struct Held {
    NodeId node = kNoNode;
    int rank = 0;
    std::optional<std::string> parent_key;  // as sent
    std::vector<Token> tokens;
    std::set<std::string> kids;  // keys of held blocks placed under this one
  };
  static std::string key(int rank, const std::string& hash);
  void store(int rank, const std::string& hash, const std::optional<std::string>& parent,
             std::vector<Token> tokens);
  void remove(const std::string& key);
  void clear_rank(int rank);
  // Places a held block's node: under its parent block when held, else at
  // the root (and remembered as waiting for that parent).
  void place(const std::string& key);
  void unplace(const std::string& key);
  // The node a held block hangs under (its parent block's, or the root).
  NodeId parent_node(const std::string& key) const;
  // `key`'s subtree in parents-first order.
  std::vector<std::string> subtree(const std::string& key) const;
  void evict_subtree(const std::string& key);
  void insert_subtree(const std::string& key);
  void push_event(CacheEvent e);
  CacheSnapshot header() const;

  Recorder& recorder_;
  ReplayTree tree_;
  std::unordered_map<std::string, Held> held_;
  // Missing parent key -> keys of held blocks at the root that name it.
  std::unordered_map<std::string, std::set<std::string>> waiting_;
  std::vector<CacheEvent> pending_;
  std::set<int> ranks_;
  NodeId next_node_ = 1;
  PageId next_page_ = 0;
  uint64_t tick_ = 0;
  int block_size_ = 0;
  uint64_t reinserted_ = 0;
};

}  // namespace rc::recording

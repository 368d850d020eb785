// HashCache: APC-style prefix caching (vLLM), the comparison point for the
// radix tree.
//
// Every full block of page_size tokens is one page, keyed by
// hash(parent block hash, block tokens) (XXH3 seeded with the parent hash),
// so a prefix is found block by block with one table lookup each. Blocks
// nobody references (ref 0) stay cached in an LRU free queue; allocation
// evicts from its head. Unlike the radix tree, an inner block can be evicted
// before its children: they stay cached but unreachable until LRU takes them
// too. That is the design being compared, not a bug.
//
// Recency: match and insert move the blocks of the key to the queue tail,
// deepest first, so a prefix outlives its continuations (vLLM frees a
// request's blocks in reverse for the same reason). Pinned blocks wait in a
// second queue that is used only when the first is empty.
//
// Single-threaded (engine thread), except events().drain().
#pragma once

#include <vector>

#include "cache/child-table.h"
#include "cache/page-pool.h"
#include "event-sink.h"
#include "radixchat/cache.h"

namespace rc {

class HashCache final : public KvCache {
 public:
  explicit HashCache(const CacheConfig& config);

  const CacheConfig& config() const override { return config_; }
  MatchResult match_prefix(std::span<const Token> tokens) override;
  int64_t peek_prefix(std::span<const Token> tokens) const override;
  Status lock(NodeHandle node) override;
  Status unlock(NodeHandle node) override;
  Status pin(NodeHandle node) override;
  Status unpin(NodeHandle node) override;
  Status alloc_pages(int64_t n, std::vector<PageId>& out) override;
  Status free_pages(std::span<const PageId> pages) override;
  Result<InsertResult> insert(std::span<const Token> tokens,
                              std::span<const PageId> pages) override;
  int64_t evict(int64_t n_tokens) override;
  Status reset() override;
  int64_t forget(std::span<const std::vector<Token>> gone, std::span<const std::vector<Token>> kept,
                 std::vector<std::vector<Token>>& dropped_paths) override;
  CacheSnapshot snapshot() const override;
  CacheStats stats() const override;
  int64_t free_page_count() const override { return pool_.free_count(); }
  int64_t node_count() const override { return live_blocks_; }
  Status check_integrity() const override;
  CacheEventQueue& events() override { return events_.queue(); }
  // Drafts come from the prompt only here (no continuation): counted, no node.
  void note_draft(NodeHandle from, int64_t drafted, int64_t accepted) override;

 private:
  struct Block {
    uint64_t hash = 0;
    uint64_t tick = 0;
    uint64_t hits = 0;
    NodeId parent = kNoNode;
    uint32_t parent_gen = 0;
    NodeId prev = kNoNode;  // free-queue links (ref == 0 only)
    NodeId next = kNoNode;
    PageId page = -1;
    uint32_t ref = 0;
    uint32_t pin = 0;
    uint32_t gen = 0;
    bool alive = false;
    bool registered = false;  // false: a hash collision kept it out of the table
    bool queued = false;
  };
  struct Queue {
    NodeId head = kNoNode;
    NodeId tail = kNoNode;
    int64_t size = 0;
  };

  const Token* block_tokens(NodeId id) const { return &tokens_[size_t(id) * ps_]; }
  uint64_t chain_hash(uint64_t parent_hash, const Token* block) const;
  // The live, verified block for `block` under `parent`, or kNoNode.
  NodeId lookup(NodeId parent, uint64_t hash, const Token* block) const;
  NodeId new_block();
  Queue& queue_of(const Block& b) { return b.pin ? pinned_ : lru_; }
  void enqueue(NodeId id);  // at the tail (most recent)
  void dequeue(NodeId id);
  void touch_chain(NodeId last);
  // Frees an unreferenced block and forgets it (evict, forget).
  void drop_block(NodeId id);
  bool valid(NodeHandle h) const;
  bool parent_alive(const Block& b) const;
  Status walk_ref(NodeHandle h, bool lock, int delta);
  CacheEvent* emit(CacheEventKind kind, NodeId node, NodeId parent, size_t tokens, size_t pages);
  void flush_events();

  CacheConfig config_;
  size_t ps_;
  PagePool pool_;
  std::vector<Block> blocks_;
  std::vector<Token> tokens_;  // ps_ tokens per block slot
  std::vector<NodeId> free_ids_;
  ChildTable table_;  // (0, hash) -> block
  Queue lru_, pinned_;
  uint64_t tick_ = 0;
  int64_t live_blocks_ = 0;
  int64_t locked_blocks_ = 0;
  CacheStats counters_;
  EventSink events_;
};

}  // namespace rc

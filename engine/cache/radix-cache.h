// RadixCache: the RadixAttention tree (docs/architecture.md section 4).
//
// Layout for speed (targets: match < 5 ns/token, insert < 20 ns/token):
// nodes live in one vector (a pool indexed by NodeId, free slots reused);
// each node keeps its token span and page indices contiguous, so a match is
// one memcmp-style loop per node; children are found through one flat
// ChildTable and linked in an intrusive sibling list for enumeration; LRU
// candidates (unlocked leaves) sit in an indexed heap. No per-token heap work.
//
// Clock: every match_prefix and insert call advances the tick by one and
// stamps each node it touches. A split stamps both halves. Eviction takes the
// smallest (pinned, tick, id) leaf, so pinned leaves go only when nothing
// else is left.
//
// Single-threaded (engine thread), except events().drain().
#pragma once

#include <vector>

#include "cache/child-table.h"
#include "cache/lru-heap.h"
#include "cache/page-pool.h"
#include "event-sink.h"
#include "radixchat/cache.h"

namespace rc {

class RadixCache : public KvCache {
 public:
  // `reuse` false makes match_prefix always miss (OffCache).
  explicit RadixCache(const CacheConfig& config, bool reuse = true);

  const CacheConfig& config() const override { return config_; }
  MatchResult match_prefix(std::span<const Token> tokens) override;
  int64_t peek_prefix(std::span<const Token> tokens) const override;
  Continuation peek_continuation(std::span<const Token> tokens, size_t max_tokens) const override;
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
  int64_t node_count() const override { return live_nodes_; }
  Status check_integrity() const override;
  CacheEventQueue& events() override { return events_.queue(); }
  void set_tier_probe(TierProbe probe) override { tier_probe_ = std::move(probe); }
  void note_promoted(NodeHandle node, int64_t tokens) override;
  void note_draft(NodeHandle from, int64_t drafted, int64_t accepted) override;

 private:
  struct Node {
    std::vector<Token> tokens;
    std::vector<PageId> pages;
    uint64_t key = 0;  // child key under parent (first token or first-page hash)
    uint64_t tick = 0;
    uint64_t hits = 0;
    uint64_t priority = 0;  // eviction priority as of its last use (touch)
    NodeId parent = kNoNode;
    NodeId first_child = kNoNode;
    NodeId next_sibling = kNoNode;
    NodeId prev_sibling = kNoNode;
    uint32_t n_children = 0;
    uint32_t lock_ref = 0;
    uint32_t pin_ref = 0;
    uint32_t gen = 0;
    bool alive = false;
  };

  uint64_t child_key(const Token* first_page) const;
  NodeId new_node();
  void delete_node(NodeId id);
  void link_child(NodeId parent, NodeId child);
  void unlink_child(NodeId child);
  void replace_child(NodeId old_child, NodeId new_child);
  NodeId split(NodeId id, size_t at);  // returns the new upper node
  void try_merge(NodeId parent);
  // A use of `n` now: its tick, and its eviction priority (config_.eviction:
  // the tick, or gdsf's L + hits with the hits already counted).
  void touch(Node& n);
  // Keeps the heap membership of `id` in line with (leaf, unlocked, pinned)
  // and its heap key with its priority.
  void refresh_candidate(NodeId id);
  bool valid(NodeHandle h) const;
  NodeHandle handle(NodeId id) const { return {id, nodes_[id].gen}; }
  CacheEvent* emit(CacheEventKind kind, NodeId node, NodeId parent, NodeId other, size_t tokens,
                   size_t pages);
  void flush_events();
  Status walk_ref(NodeHandle h, bool lock, int delta);
  // The tokens from the root to the end of `id`, root first.
  void path_of(NodeId id, std::vector<Token>& out) const;
  // The child of `node` that `path[pos:]` enters and how many of its tokens
  // (page-aligned) the path shares; {kNoNode, 0} when none.
  std::pair<NodeId, size_t> step(NodeId node, std::span<const Token> path, size_t pos) const;
  // forget()'s removal of `top` and everything below it (none of it locked
  // or pinned); its parent is left for forget() to merge or make a candidate.
  int64_t drop_subtree(NodeId top, std::vector<std::vector<Token>>& dropped_paths);
  Status check_tree(std::vector<uint8_t>& page_owned) const;

  CacheConfig config_;
  bool reuse_;
  size_t ps_;
  PagePool pool_;
  std::vector<Node> nodes_;
  std::vector<NodeId> free_ids_;
  ChildTable children_;
  LruHeap heap_;
  uint64_t tick_ = 0;
  uint64_t gdsf_clock_ = 0;  // gdsf's L: the priority of the last leaf evicted
  int64_t live_nodes_ = 0;
  int64_t cached_tokens_ = 0;
  int64_t evictable_pages_ = 0;
  int64_t locked_pages_ = 0;
  int64_t pinned_pages_ = 0;
  CacheStats counters_;
  // Parents looked at by the last eviction pass: integrity checks that none
  // of them is left mergeable.
  std::vector<NodeId> last_evict_parents_;
  EventSink events_;
  TierProbe tier_probe_;
  std::vector<Token> probe_path_;  // evict()'s scratch for tier_probe_
};

}  // namespace rc

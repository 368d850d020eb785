// The panel's copy of the KV cache tree: a snapshot plus the event stream,
// with the short-lived annotations the drawing needs (what was just matched,
// inserted, split, merged or evicted).
//
// Replay contract (radixchat/cache-events.h): reset(snapshot), then apply()
// every drained event in seq order. Events older than the snapshot are
// skipped; a seq gap or an event that names a node the model does not have
// returns needs_resync and leaves the model as it was before that event, and
// the caller takes a fresh snapshot. After applying every event up to a point,
// infos() equals the snapshot's node list at that point (tests check this on
// random workloads).
//
// Pure logic: no Qt, no ImGui, no engine calls; GUI thread only. Times are
// seconds on the caller's clock, passed in so tests can drive them.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "radixchat/cache.h"

namespace rc::ui::panel {

inline constexpr double kNever = -std::numeric_limits<double>::infinity();
// Seconds a node stays marked as a draft's source; drafts from it that
// follow within this time add to the same mark's counts.
inline constexpr double kDraftGlow = 6.0;

struct TreeNode {
  // Replayed state (what a snapshot holds).
  NodeId id = kRootNode;
  NodeId parent = kNoNode;
  std::vector<Token> tokens;
  std::vector<PageId> pages;
  uint32_t lock_ref = 0;
  uint32_t pin_ref = 0;
  uint64_t last_access = 0;
  uint64_t hits = 0;

  // Children in the order they appeared; a split or merge puts the new node
  // in the old one's place, so the drawing does not reshuffle siblings.
  std::vector<NodeId> children;

  // Annotations, in caller seconds (kNever when it never happened).
  double inserted_at = kNever;  // created by an insert (the new suffix)
  double flashed_at = kNever;   // split or merged
  double matched_at = kNever;   // on the path of the latest match
  // Cache tiers below the pool (docs/architecture.md section 8): tokens of
  // this node the tiers also hold (from snapshots, which carry it, and from
  // demote events), and when it was demoted or loaded back (promote).
  uint32_t held_below = 0;
  double demoted_at = kNever;
  double promoted_at = kNever;
  // Drafted decoding: when a draft last came from this node (draft events)
  // and the tokens drafted from it and kept since its mark was last clear.
  double drafted_at = kNever;
  uint32_t draft_tokens = 0, draft_kept = 0;
  // Tokens from the root to the start of this node (kept for locate and
  // the details view; updated on structure changes).
  int64_t depth_tokens = 0;
};

// A node removed by an eviction (or reset), kept briefly so the drawing can
// fade it out where it was.
struct Ghost {
  TreeNode node;
  double died_at = 0;
  NodeId parent = kNoNode;  // the parent at eviction time (may be gone too)
  uint64_t serial = 0;      // 1, 2, ... in burial order
  // Where the view last drew it (world units), set by the view's owner
  // right after the event; a ghost without a place is not drawn.
  bool placed = false;
  float x = 0, y = 0, w = 0, h = 0;
};

enum class ApplyResult {
  applied,
  skipped,       // seq older than the model (already reflected)
  needs_resync,  // gap or unknown node: take a snapshot and reset()
};

class TreeModel {
 public:
  TreeModel();

  // Replaces everything with `snap` (annotations cleared, ghosts kept).
  void reset(const CacheSnapshot& snap, double now);
  // Copies the snapshot's held_below onto the nodes both have (by id),
  // nothing else: events do not carry it, so a viewer refreshes it from
  // snapshots now and then. Returns whether any node's mark changed.
  bool refresh_held_below(const CacheSnapshot& snap);

  // Tier events seen since the model was made (resets keep them): demote
  // and promote events and the tokens they name.
  struct TierCounts {
    uint64_t demotions = 0, demoted_tokens = 0;
    uint64_t promotions = 0, promoted_tokens = 0;
  };
  const TierCounts& tier_counts() const { return tier_counts_; }
  // Draft events seen since the model was made (resets keep them): drafts
  // verified, those taken from the tree, and their tokens drafted and kept
  // (wasted = drafted - accepted).
  struct DraftCounts {
    uint64_t drafts = 0, tree_drafts = 0;
    uint64_t drafted_tokens = 0, accepted_tokens = 0;
    uint64_t wasted_tokens() const { return drafted_tokens - accepted_tokens; }
  };
  const DraftCounts& draft_counts() const { return draft_counts_; }
  ApplyResult apply(const CacheEvent& e, double now);

  // Seq of the next event the model expects.
  uint64_t next_seq() const { return next_seq_; }
  bool has_snapshot() const { return has_snapshot_; }
  CachePolicy policy() const { return policy_; }
  int page_size() const { return page_size_; }
  int64_t total_pages() const { return total_pages_; }
  uint64_t tick() const { return tick_; }

  const TreeNode* find(NodeId id) const;
  const TreeNode& root() const { return nodes_.at(kRootNode); }
  size_t size() const { return nodes_.size(); }  // including the root
  const std::unordered_map<NodeId, TreeNode>& nodes() const { return nodes_; }

  // The replayed node set, sorted by id, root first: comparable with
  // CacheSnapshot::nodes.
  std::vector<CacheNodeInfo> infos() const;

  // Bumped on every change of shape or span (insert, split, merge, evict,
  // reset): the layout is recomputed only when this moves.
  uint64_t structure_version() const { return structure_version_; }
  // Bumped on any change at all (locks, recency too).
  uint64_t version() const { return version_; }

  // The latest match: deepest node and matched length (0 tokens: a miss).
  NodeId last_match_node() const { return last_match_node_; }
  int64_t last_match_tokens() const { return last_match_tokens_; }
  double last_match_at() const { return last_match_at_; }
  // The latest insert that created a node (kNoNode when none yet).
  NodeId last_insert_node() const { return last_insert_node_; }

  // Ghosts younger than `max_age` seconds; older ones are dropped here.
  const std::vector<Ghost>& ghosts() const { return ghosts_; }
  std::vector<Ghost>& ghosts() { return ghosts_; }
  uint64_t ghost_serial() const { return ghost_serial_; }
  void expire_ghosts(double now, double max_age);

  // Tokens from the root to the end of `id` (empty for the root or unknown).
  std::vector<Token> path_tokens(NodeId id) const;
  // Deepest node whose whole root path is a prefix of `tokens`; `partial`
  // (optional) receives a child that matches further without matching whole.
  NodeId locate(const std::vector<Token>& tokens, NodeId* partial = nullptr) const;

  // Page accounting derived from the tree: pages of locked nodes (protected)
  // and of unlocked ones (evictable, pinned among them).
  struct Pages {
    int64_t protected_pages = 0;
    int64_t evictable_pages = 0;
    int64_t pinned_pages = 0;
    int64_t cached_tokens = 0;
  };
  Pages pages_by_state() const;

 private:
  // What applying one event did: failed (resync), touched counts and ticks
  // only, or changed the tree's shape. apply() dispatches by kind.
  enum class Change { resync, recency, structure };
  Change apply_kind(const CacheEvent& e, double now);
  Change apply_insert(const CacheEvent& e, double now);
  Change apply_split(const CacheEvent& e, double now);
  Change apply_merge(const CacheEvent& e, double now);
  Change apply_evict(const CacheEvent& e, double now);
  Change apply_reset(const CacheEvent& e, double now);
  Change apply_tier(const CacheEvent& e, double now);
  Change apply_draft(const CacheEvent& e, double now);
  TreeNode* get(NodeId id);
  void touch_to_root(NodeId id, uint64_t tick, bool hit, double now, bool mark_match);
  bool refs_to_root(NodeId id, int delta, bool pin);
  void replace_child(NodeId parent, NodeId old_child, NodeId new_child);
  void remove_child(NodeId parent, NodeId child);
  void refresh_depths(NodeId from);
  void bury(const TreeNode& n, double now);

  std::unordered_map<NodeId, TreeNode> nodes_;
  std::vector<Ghost> ghosts_;
  uint64_t ghost_serial_ = 0;
  CachePolicy policy_ = CachePolicy::radix;
  int page_size_ = 1;
  int64_t total_pages_ = 0;
  uint64_t tick_ = 0;
  uint64_t next_seq_ = 0;
  bool has_snapshot_ = false;
  uint64_t structure_version_ = 0;
  uint64_t version_ = 0;
  NodeId last_match_node_ = kNoNode;
  int64_t last_match_tokens_ = 0;
  double last_match_at_ = kNever;
  NodeId last_insert_node_ = kNoNode;
  TierCounts tier_counts_;
  DraftCounts draft_counts_;
};

}  // namespace rc::ui::panel

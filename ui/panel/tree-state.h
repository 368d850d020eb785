// One tree as the cache panel shows it: the model replayed from its feed,
// its layout and camera, what the user picked on it, and the marks and
// counters made in it (the located message, the context cut, look-alike
// siblings, "why it missed", and the model's draft and tier counts).
//
// The panel holds one per tree it shows (docs/architecture.md section 16):
// the user's own is parked whole while a lesson, a remote cache or a
// recording is in front and comes back as it was, and a new source gets a
// fresh one, so nothing made in one tree shows in another.
//
// GUI thread only. It never reads a feed: the owner passes the text of a
// token span (span_text) and the snapshots it resyncs from.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "panel/miss-view.h"
#include "panel/node-marks.h"
#include "panel/tree-lod.h"
#include "panel/tree-model.h"
#include "panel/tree-view.h"

namespace rc::ui::panel {

struct TreeState {
  using SpanText = std::function<std::string(const std::vector<Token>&)>;

  // --- The tree and how it is laid out and seen -------------------------------
  TreeModel model;
  LodOptions lod;
  NodeMetrics metrics;
  TreeView view;
  int orientation = 0;            // 0: by the canvas' shape, 1: left to right, 2: top to bottom
  float text_scale = 1.0f;        // the text scale metrics and view.font_size are for
  uint64_t layouts_computed = 0;  // also the layout generation the view sees
  // Decodes a span of this tree's tokens (its feed's detokenizer); set by
  // the owner when the tree's feed is shown. Empty: spans read as "".
  SpanText span_text;

  // A tree for another source: this one's settings (LOD budget, text scale,
  // direction, animation), none of its nodes, folds, camera or marks.
  TreeState fresh() const;

  // The model becomes `snap` (a resync of the same source); marks stay and
  // are found again in it.
  void reset(const CacheSnapshot& snap, double now);
  // Its source was shown again (or for the first time): everything keyed
  // by node id that the next snapshot may not hold is dropped, and the
  // selection with it. Marks stay: they are found again by their tokens.
  void reshow();
  // After an evict or reset event: the ghosts it made take the boxes the
  // view last drew their nodes in.
  void place_new_ghosts();

  // The layout for the current model and options; recomputed when the
  // tree's shape, the LOD options or the kept nodes change (and, with LOD
  // folding active, at most twice a second when only recency changed).
  const TreeLayout& layout(double now);
  // Pages of the tree by state (TreeModel::pages_by_state), per model version.
  const TreeModel::Pages& pages();
  // Decoded text of a node's span (and the one-line fit the view caches).
  NodeLabel& label(const TreeNode& n);
  // Fold or unfold a node by hand; show all children of a capped parent.
  void toggle_fold(NodeId id);
  void expand_children(NodeId id);
  void lod_changed() { ++lod_version_; }
  // Box sizes and label fonts for a text scale (kBaseFontPx at 1).
  void set_text_scale(float scale, float base_font_px);
  // Lays out only what is in flight (the `off` policy, tree-lod.h); true
  // when that changed.
  bool set_in_flight_only(bool off);
  // Seconds an eviction's ghost is shown over the old layout before the
  // tree reflows.
  static constexpr double kGhostHoldSeconds = 0.9;
  bool holding_for_ghosts(double now) const;

  // --- What the user picked on it -----------------------------------------
  NodeId selected = kNoNode;
  void select(NodeId id);
  // A located message: its tokens, the deepest node of its path (and a
  // child that matches further), and what the app knows of its request.
  NodeId located = kNoNode;
  NodeId located_partial = kNoNode;
  std::vector<Token> located_tokens;
  LocatedRequest located_request;
  // Remembers `tokens` and finds them now; the view pans to the node.
  // Returns the node to select (the partial match when there is one).
  NodeId locate(const std::vector<Token>& tokens, const LocatedRequest& request);
  // Finds the located tokens again once the tree's shape changed (each sync).
  void relocate();
  // Forget the located message on the next relocate (a recording's jump
  // asks for the path of another prompt).
  void relocate_soon() { located_structure_ = UINT64_MAX; }
  // Conversations that use the selected node (the owner's answer).
  NodeId conversations_for = kNoNode;
  std::vector<std::string> conversation_titles;
  bool conversations_pending = false;

  // --- Marks made in it (node-marks.h) --------------------------------------
  // Siblings that read the same with other token ids.
  SiblingDiffs look_alikes;
  // The latest context cut and where its prompt leaves the cached path.
  ContextCut context_cut;
  // Keeps both up to date with the model; `source` names the feed (its
  // detokenizer) the look-alikes were read with.
  void refresh_marks(const void* source, double now);
  // "Why it missed" for the located message, against the cache when asked.
  MissView live_miss;
  bool live_miss_valid = false;
  NodeId live_miss_node = kNoNode;  // selected when it was explained

 private:
  std::unordered_map<NodeId, NodeLabel> labels_;
  TreeLayout layout_;
  uint64_t layout_structure_ = UINT64_MAX;
  uint64_t layout_version_ = UINT64_MAX;
  uint64_t layout_lod_version_ = UINT64_MAX;
  std::vector<NodeId> layout_keep_;
  double layout_at_ = -1e9;
  uint64_t lod_version_ = 0;
  uint64_t located_structure_ = UINT64_MAX;
  uint64_t ghosts_placed_ = 0;  // serial of the latest ghost given a place
  TreeModel::Pages pages_;
  uint64_t pages_version_ = UINT64_MAX;
  const TreeModel* pages_model_ = nullptr;
};

}  // namespace rc::ui::panel

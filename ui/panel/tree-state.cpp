// TreeState: one tree's model -> layout pipeline, its selection and the
// marks made in it.
#include "panel/tree-state.h"

#include <algorithm>

#include "panel/document-marks.h"
#include "radixchat/cache-text.h"

namespace rc::ui::panel {

TreeState TreeState::fresh() const {
  TreeState t;
  t.lod.enabled = lod.enabled;
  t.lod.max_visible = lod.max_visible;
  t.lod.max_children = lod.max_children;
  t.lod.max_depth = lod.max_depth;
  t.metrics = metrics;
  t.orientation = orientation;
  t.text_scale = text_scale;
  t.view.animate = view.animate;
  t.view.smooth_camera = view.smooth_camera;
  t.view.fill_background = view.fill_background;
  t.view.font_size = view.font_size;
  return t;
}

void TreeState::reset(const CacheSnapshot& snap, double now) {
  model.reset(snap, now);
  ghosts_placed_ = model.ghost_serial();
}

void TreeState::reshow() {
  labels_.clear();
  layout_structure_ = pages_version_ = UINT64_MAX;  // versions restart with a new model
  located_structure_ = UINT64_MAX;
  selected = located = located_partial = kNoNode;
  live_miss_valid = false;  // it was about the tree as it was (Cache again asks anew)
  conversations_for = kNoNode;
  conversation_titles.clear();
  conversations_pending = false;
}

void TreeState::place_new_ghosts() {
  // The ghost takes the box where the view last drew the node; its id may be
  // reused at once by a new node, which must not glide from the old place.
  for (Ghost& g : model.ghosts()) {
    if (g.serial <= ghosts_placed_) continue;
    float x, y, w, h;
    if (view.world_box(g.node.id, layout_, &x, &y, &w, &h)) {
      g.placed = true;
      g.x = x;
      g.y = y;
      g.w = w;
      g.h = h;
    }
    view.forget(g.node.id);
    labels_.erase(g.node.id);
  }
  ghosts_placed_ = model.ghost_serial();
}

const TreeLayout& TreeState::layout(double now) {
  // Nodes kept visible through level of detail: what the user looks at, and
  // where the latest request matched and inserted.
  std::vector<NodeId> keep;
  for (NodeId id : {selected, located, located_partial, context_cut.node, model.last_match_node(),
                    model.last_insert_node()})
    if (id != kNoNode && model.find(id)) keep.push_back(id);
  // Only the user's own picks force a relayout at once when they are not
  // laid out; the latest match and insert ride along with the next one.
  bool user_missing = false;
  for (NodeId id : {selected, located, located_partial})
    if (id != kNoNode && model.find(id) && !layout_.find(id)) user_missing = true;
  const bool folding = lod.enabled && model.size() > lod.max_visible;
  const bool options = layout_lod_version_ != lod_version_;
  // Under `off` a lock or unlock changes what is drawn.
  bool stale = options || user_missing || layout_structure_ != model.structure_version() ||
               (lod.only_in_flight && layout_version_ != model.version()) ||
               (folding && (layout_version_ != model.version() || keep != layout_keep_) &&
                now - layout_at_ > 0.5);
  // Held at most two seconds: steady evictions must not freeze the tree.
  if (stale && !options && !user_missing && holding_for_ghosts(now) && now - layout_at_ < 2.0)
    stale = false;
  // A big tree growing every frame is laid out at most ten times a second:
  // new boxes appear a few frames late instead of every frame costing a
  // full layout.
  if (stale && !options && !user_missing && model.size() > 2000 && now - layout_at_ < 0.1)
    stale = false;
  if (stale) {
    lod.keep = keep;
    layout_ = layout_tree(model, lod, metrics);
    layout_structure_ = model.structure_version();
    layout_version_ = model.version();
    layout_lod_version_ = lod_version_;
    layout_keep_ = keep;
    layout_at_ = now;
    ++layouts_computed;
  }
  return layout_;
}

const TreeModel::Pages& TreeState::pages() {
  if (pages_version_ != model.version() || pages_model_ != &model) {
    pages_ = model.pages_by_state();
    pages_version_ = model.version();
    pages_model_ = &model;
  }
  return pages_;
}

NodeLabel& TreeState::label(const TreeNode& n) {
  NodeLabel& l = labels_[n.id];
  const Token first = n.tokens.empty() ? -1 : n.tokens.front();
  const TreeNode* parent = n.parent == kNoNode ? nullptr : model.find(n.parent);
  const Token parent_last = parent && !parent->tokens.empty() ? parent->tokens.back() : -1;
  if (l.n_tokens != n.tokens.size() || l.first != first || l.parent_last != parent_last ||
      (l.full.empty() && !n.tokens.empty())) {
    l.n_tokens = n.tokens.size();
    l.first = first;
    l.parent_last = parent_last;
    // Template tokens as marks ("<|end|>" reads "⏎ end"), as the exports
    // draw them; document nodes carry their file's name first
    // (document-marks.h), also when the header began in the parent (two
    // layouts that part inside it).
    std::string before;
    if (span_text && parent) {
      constexpr size_t kHeaderTail = 32;  // tokens: "### Document: " and a name
      const size_t from = parent->tokens.size() - std::min(parent->tokens.size(), kHeaderTail);
      before = span_text(
          std::vector<Token>(parent->tokens.begin() + ptrdiff_t(from), parent->tokens.end()));
    }
    l.full = with_document_mark(
        span_text ? readable_control_tokens(span_text(n.tokens)) : std::string(), before);
    l.ends.clear();
    l.fitted_for = -1;
  }
  return l;
}

void TreeState::toggle_fold(NodeId id) {
  const LaidNode* ln = layout_.find(id);
  if (ln && ln->folded) {
    lod.collapsed.erase(id);
    lod.expanded.insert(id);
  } else {
    lod.expanded.erase(id);
    lod.collapsed.insert(id);
  }
  ++lod_version_;
}

void TreeState::expand_children(NodeId id) {
  lod.collapsed.erase(id);
  lod.expanded.insert(id);
  ++lod_version_;
}

void TreeState::set_text_scale(float scale, float base_font_px) {
  if (scale == text_scale) return;
  text_scale = scale;
  const NodeMetrics base;
  metrics.height = base.height * scale;
  metrics.min_width = base.min_width * scale;
  metrics.per_log2 = base.per_log2 * scale;
  metrics.max_width = base.max_width * scale;
  metrics.sibling_gap = base.sibling_gap * scale;
  metrics.level_gap = base.level_gap * scale;
  view.font_size = base_font_px * scale;
  for (auto& [id, l] : labels_) l.fitted_for = -1;
  lod_changed();
  view.request_fit();
}

bool TreeState::set_in_flight_only(bool off) {
  if (off == lod.only_in_flight) return false;
  lod.only_in_flight = off;
  view.empty_message =
      off ? "Nothing in flight. Off keeps no prefix to reuse." : TreeView().empty_message;
  lod_changed();
  return true;
}

// After an eviction the tree keeps its old layout for a moment, so the red
// ghost is seen where the node was before the boxes move into its place.
bool TreeState::holding_for_ghosts(double now) const {
  for (const Ghost& g : model.ghosts())
    if (g.placed && now - g.died_at < kGhostHoldSeconds) return true;
  return false;
}

void TreeState::select(NodeId id) {
  selected = id;
  if (conversations_for != id) {
    conversations_for = kNoNode;
    conversation_titles.clear();
    conversations_pending = false;
  }
}

NodeId TreeState::locate(const std::vector<Token>& tokens, const LocatedRequest& request) {
  located_tokens = tokens;
  located_request = request;
  if (tokens.empty()) {
    located = located_partial = kNoNode;
    return kNoNode;
  }
  located = model.locate(tokens, &located_partial);
  located_structure_ = model.structure_version();
  const NodeId target = located_partial != kNoNode ? located_partial : located;
  select(target);
  view.focus(target);
  view.follow = false;
  return target;
}

void TreeState::relocate() {
  if (located_tokens.empty() || located_structure_ == model.structure_version()) return;
  located_structure_ = model.structure_version();
  located = model.locate(located_tokens, &located_partial);
}

void TreeState::refresh_marks(const void* source, double now) {
  // Both return at once unless the tree's shape changed.
  look_alikes.update(
      model, source,
      [this](const std::vector<Token>& t) { return span_text ? span_text(t) : std::string(); },
      [this](const TreeNode& n) -> const std::string& { return label(n).full; }, now);
  context_cut.resolve(model);
}

}  // namespace rc::ui::panel

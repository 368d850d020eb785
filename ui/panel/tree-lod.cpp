#include "panel/tree-lod.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rc::ui::panel {

float NodeMetrics::width_for(size_t tokens) const {
  return std::min(max_width, min_width + per_log2 * std::log2(1.0f + float(tokens)));
}

namespace {

constexpr uint64_t kHot = std::numeric_limits<uint64_t>::max();

// The model flattened in pre-order (parents before children).
struct Flat {
  std::vector<const TreeNode*> node;
  std::vector<int> parent;
  std::vector<std::vector<int>> kids;
  std::vector<int> depth;
  std::unordered_map<NodeId, int> index;
};

Flat flatten(const TreeModel& model) {
  Flat f;
  f.node.reserve(model.size());
  std::vector<std::pair<const TreeNode*, int>> stack{{&model.root(), -1}};
  while (!stack.empty()) {
    auto [n, parent] = stack.back();
    stack.pop_back();
    const int i = int(f.node.size());
    f.node.push_back(n);
    f.parent.push_back(parent);
    f.kids.emplace_back();
    f.depth.push_back(parent < 0 ? 0 : f.depth[size_t(parent)] + 1);
    f.index.emplace(n->id, i);
    if (parent >= 0) f.kids[size_t(parent)].push_back(i);
    const auto& c = n->children;
    for (auto it = c.rbegin(); it != c.rend(); ++it)
      if (const TreeNode* cn = model.find(*it)) stack.push_back({cn, i});
  }
  // Children were appended in pop order, which is drawing order already.
  return f;
}

// Per flat node: the latest access in its subtree (kHot on the paths to the
// nodes the caller keeps) and the subtree's node count.
struct Heat {
  std::vector<uint64_t> hot;
  std::vector<int64_t> size;
};

Heat subtree_heat(const Flat& f, const LodOptions& lod) {
  const size_t n = f.node.size();
  Heat h{std::vector<uint64_t>(n), std::vector<int64_t>(n, 1)};
  for (size_t i = 0; i < n; ++i) h.hot[i] = f.node[i]->last_access;
  for (size_t i = n; i-- > 1;) {
    const size_t p = size_t(f.parent[i]);
    h.hot[p] = std::max(h.hot[p], h.hot[i]);
    h.size[p] += h.size[i];
  }
  for (NodeId id : lod.keep) {
    auto it = f.index.find(id);
    for (int i = it == f.index.end() ? -1 : it->second; i >= 0; i = f.parent[size_t(i)])
      h.hot[size_t(i)] = kHot;
  }
  return h;
}

// One threshold meets the budget: a node's children are shown iff the
// node's subtree is at least that hot.
uint64_t fold_threshold(const Flat& f, const Heat& h, const LodOptions& lod) {
  const size_t n = f.node.size();
  if (!lod.enabled || n <= lod.max_visible || lod.max_visible <= 1) return 0;
  std::vector<uint64_t> parent_hot;
  parent_hot.reserve(n);
  for (size_t i = 1; i < n; ++i)
    parent_hot.push_back(f.parent[i] == 0 ? kHot : h.hot[size_t(f.parent[i])]);
  const size_t k = std::min(parent_hot.size() - 1, lod.max_visible - 2);
  std::nth_element(parent_hot.begin(), parent_hot.begin() + ptrdiff_t(k), parent_hot.end(),
                   std::greater<uint64_t>());
  // Strictly hotter than the k-th: ties at the threshold would overshoot.
  return parent_hot[k] == kHot ? kHot : parent_hot[k] + 1;
}

// The children of an expanded node that get boxes; the rest (beyond the
// fan-out cap, coldest first) are counted into `folded` nodes in
// `folded_count` subtrees for one "+N more" box.
std::vector<int> shown_children(const std::vector<int>& kids, NodeId id, const Heat& h,
                                const LodOptions& lod, int64_t& folded, size_t& folded_count) {
  folded = 0;
  folded_count = 0;
  const size_t cap = std::max<size_t>(lod.max_children, 2);
  if (!lod.enabled || kids.size() <= cap || lod.expanded.count(id)) return kids;
  std::vector<int> by_heat = kids;
  std::stable_sort(by_heat.begin(), by_heat.end(),
                   [&](int a, int b) { return h.hot[size_t(a)] > h.hot[size_t(b)]; });
  std::unordered_set<int> keep(by_heat.begin(), by_heat.begin() + ptrdiff_t(cap - 1));
  std::vector<int> shown;
  for (int k : kids) {
    if (keep.count(k) || h.hot[size_t(k)] == kHot) {
      shown.push_back(k);
    } else {
      folded += h.size[size_t(k)];
      ++folded_count;
    }
  }
  return shown;
}

// Runs the tidy layout and copies the boxes into `out` (swapping the axes
// back for a vertical tree).
void place_boxes(TreeLayout& out, const TidyInput& in, const LodOptions& lod,
                 const NodeMetrics& m) {
  TidyParams tp;
  tp.sibling_gap = lod.vertical ? m.sibling_gap * 1.6f : m.sibling_gap;
  tp.level_gap = lod.vertical ? m.level_gap * 0.6f : m.level_gap;
  const std::vector<Box> boxes = tidy_layout(in, tp);
  out.vertical = lod.vertical;
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    LaidNode& ln = out.nodes[i];
    const Box& b = boxes[i];
    ln.x = lod.vertical ? b.y : b.x;
    ln.y = lod.vertical ? b.x : b.y;
    ln.w = lod.vertical ? b.h : b.w;
    ln.h = lod.vertical ? b.w : b.h;
    ln.depth = b.depth;
    out.width = std::max(out.width, ln.x + ln.w);
    out.height = std::max(out.height, ln.y + ln.h);
  }
}

}  // namespace

TreeLayout layout_tree(const TreeModel& model, const LodOptions& lod, const NodeMetrics& m) {
  const Flat f = flatten(model);
  const size_t n = f.node.size();
  const Heat heat = subtree_heat(f, lod);
  const uint64_t threshold = fold_threshold(f, heat, lod);
  // With only_in_flight: whether a subtree holds a locked node.
  std::vector<char> live(n, lod.only_in_flight ? 0 : 1);
  if (lod.only_in_flight) {
    live[0] = 1;
    for (size_t i = n; i-- > 1;) {
      if (f.node[i]->lock_ref > 0) live[i] = 1;
      if (live[i]) live[size_t(f.parent[i])] = 1;
    }
  }
  auto expanded = [&](size_t i) {
    if (i == 0) return true;
    const NodeId id = f.node[i]->id;
    if (lod.expanded.count(id)) return true;
    if (lod.collapsed.count(id)) return false;
    if (!lod.enabled) return true;
    if (lod.max_depth > 0 && f.depth[i] >= lod.max_depth && heat.hot[i] != kHot) return false;
    return heat.hot[i] >= threshold;
  };

  // Visible tree in pre-order, with "+N more" boxes for capped fan-out.
  TreeLayout out;
  out.model_nodes = n;
  TidyInput in;
  struct Item {
    int flat;  // -1: an aggregate box
    int parent_out;
    int64_t hidden;
    int64_t count;
  };
  std::vector<Item> stack{{0, -1, 0, 0}};
  // The tidy layout runs depth along its x: a vertical tree swaps the axes
  // going in and coming out.
  auto push_size = [&](float w, float h) {
    in.width.push_back(lod.vertical ? h : w);
    in.height.push_back(lod.vertical ? w : h);
  };
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const int o = int(out.nodes.size());
    LaidNode ln;
    ln.parent = it.parent_out;
    in.children.emplace_back();
    if (it.parent_out >= 0) in.children[size_t(it.parent_out)].push_back(o);
    if (it.flat < 0) {
      ln.aggregate = true;
      ln.hidden = it.hidden;
      ln.folded_children = it.count;
      push_size(m.min_width + 16, m.height * 0.75f);
      out.nodes.push_back(ln);
      continue;
    }
    const size_t i = size_t(it.flat);
    ln.id = f.node[i]->id;
    push_size(i == 0 ? m.min_width * 0.75f : m.width_for(f.node[i]->tokens.size()), m.height);
    out.index.emplace(ln.id, o);
    const auto& kids = f.kids[i];
    if (!kids.empty() && !expanded(i)) {
      ln.folded = true;
      ln.hidden = heat.size[i] - 1;
      out.nodes.push_back(ln);
      continue;
    }
    out.nodes.push_back(ln);
    int64_t folded = 0;
    size_t folded_count = 0;
    std::vector<int> shown = shown_children(kids, ln.id, heat, lod, folded, folded_count);
    if (lod.only_in_flight)
      shown.erase(
          std::remove_if(shown.begin(), shown.end(), [&](int k) { return !live[size_t(k)]; }),
          shown.end());
    // Pushed in reverse so they pop (and lay out) in drawing order.
    if (folded_count) stack.push_back({-1, o, folded, int64_t(folded_count)});
    for (auto k = shown.rbegin(); k != shown.rend(); ++k) stack.push_back({*k, o, 0, 0});
  }
  place_boxes(out, in, lod, m);
  return out;
}

}  // namespace rc::ui::panel

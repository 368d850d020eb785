// Level of detail: which nodes of the model the panel lays out, and the
// resulting layout in world units.
//
// A tree of 10,000 nodes cannot be read box by box, so when it is larger than
// a budget the coldest subtrees are folded: a node whose whole subtree was
// last used long ago shows as one box with a "+N" count instead of its
// descendants. Hotness of a subtree is the newest last_access inside it, so
// folding is monotone (a folded node's descendants are all colder) and the
// budget is met by one threshold: expand a node iff its subtree is at least as
// hot as the budget-th hottest parent. Nodes the user is looking at (the
// selection, the located message, the latest match and insert) stay visible
// with their path. A parent with very many visible children shows the
// hottest few and one "+N more" box for the rest.
//
// Pure logic over TreeModel; GUI thread.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "panel/tree-layout.h"
#include "panel/tree-model.h"

namespace rc::ui::panel {

struct NodeMetrics {
  float height = 38;     // box height (two text lines)
  float min_width = 84;  // a one-token node
  float per_log2 = 20;   // extra width per doubling of the token count
  float max_width = 250;
  float sibling_gap = 10;
  float level_gap = 44;
  // Box width for a span of `tokens` tokens: wider spans read as longer,
  // logarithmic so a 2,000-token system prompt does not dwarf the tree.
  float width_for(size_t tokens) const;
};

struct LodOptions {
  bool enabled = true;                   // fold cold subtrees / cap fan-out
  size_t max_visible = 1200;             // budget of boxes (folded nodes count once)
  size_t max_children = 40;              // per parent, before a "+N more" box
  int max_depth = 0;                     // fold below this many levels (0: no limit)
  std::vector<NodeId> keep;              // always visible, with their root paths
  std::unordered_set<NodeId> collapsed;  // folded by the user
  std::unordered_set<NodeId> expanded;   // unfolded by the user (beats LOD)
  // Depth runs down instead of right: chats make long chains, which read
  // better top to bottom in a tall, narrow panel.
  bool vertical = false;
  // Only nodes on the path of a locked node (a request in flight) are laid
  // out: the `off` policy reuses nothing, and a tree of dead sequences
  // would look like a cache with no hits.
  bool only_in_flight = false;
};

struct LaidNode {
  NodeId id = kNoNode;  // kNoNode for a "+N more" box
  int parent = -1;      // index into TreeLayout::nodes; -1 for the root
  float x = 0, y = 0, w = 0, h = 0;
  int depth = 0;
  bool folded = false;          // has descendants that are not laid out
  bool aggregate = false;       // "+N more" box standing for folded siblings
  int64_t hidden = 0;           // folded: descendants; aggregate: folded siblings' subtrees
  int64_t folded_children = 0;  // aggregate: how many siblings it stands for
};

struct TreeLayout {
  std::vector<LaidNode> nodes;  // root first, then depth-first
  std::unordered_map<NodeId, int> index;
  float width = 0, height = 0;
  size_t model_nodes = 0;  // nodes in the model, root included
  bool vertical = false;   // depth runs down (edges leave a box's bottom)
  bool empty() const { return nodes.size() <= 1; }
  const LaidNode* find(NodeId id) const {
    auto it = index.find(id);
    return it == index.end() ? nullptr : &nodes[size_t(it->second)];
  }
};

TreeLayout layout_tree(const TreeModel& model, const LodOptions& lod, const NodeMetrics& metrics);

}  // namespace rc::ui::panel

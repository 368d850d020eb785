#include "recording/chain-fold.h"

#include <algorithm>
#include <vector>

namespace rc::recording {

FoldedTree fold_single_child_chains(const CacheSnapshot& tree) {
  std::unordered_map<NodeId, std::vector<size_t>> kids;  // parent -> child indices
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    if (tree.nodes[i].id != kRootNode) kids[tree.nodes[i].parent].push_back(i);
  }
  FoldedTree out;
  out.tree = tree;
  out.tree.nodes.clear();
  // Iterative walk: a chain can be as long as a context.
  std::vector<std::pair<size_t, NodeId>> stack;  // node index, parent in the output
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    if (tree.nodes[i].id == kRootNode) stack.emplace_back(i, kNoNode);
  }
  while (!stack.empty()) {
    auto [i, parent] = stack.back();
    stack.pop_back();
    CacheNodeInfo n = tree.nodes[i];
    n.parent = parent;
    size_t blocks = 1;
    size_t at = i;
    // The root stays itself; any other node absorbs its only child.
    while (n.id != kRootNode && kids[tree.nodes[at].id].size() == 1) {
      at = kids[tree.nodes[at].id].front();
      const CacheNodeInfo& c = tree.nodes[at];
      n.tokens.insert(n.tokens.end(), c.tokens.begin(), c.tokens.end());
      n.pages.insert(n.pages.end(), c.pages.begin(), c.pages.end());
      n.lock_ref = std::max(n.lock_ref, c.lock_ref);
      n.pin_ref = std::max(n.pin_ref, c.pin_ref);
      n.hits = std::max(n.hits, c.hits);
      n.last_access = std::max(n.last_access, c.last_access);
      ++blocks;
    }
    if (blocks > 1) out.blocks[n.id] = blocks;
    const auto& children = kids[tree.nodes[at].id];
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.emplace_back(*it, n.id);
    out.tree.nodes.push_back(std::move(n));
  }
  std::sort(out.tree.nodes.begin(), out.tree.nodes.end(),
            [](const CacheNodeInfo& a, const CacheNodeInfo& b) { return a.id < b.id; });
  out.tree.stats.nodes = int64_t(out.tree.nodes.size()) - 1;
  return out;
}

bool is_block_recording(const RecordingSummary& summary) {
  return summary.meta.count("remote_events") > 0;
}

}  // namespace rc::recording

// RadixCache::forget: purging the nodes only deleted prompts used
// (docs/architecture.md section 8).
#include <algorithm>

#include "cache/radix-cache.h"
#include "cache/span-compare.h"

namespace rc {

std::pair<NodeId, size_t> RadixCache::step(NodeId node, std::span<const Token> path,
                                           size_t pos) const {
  if (path.size() - pos < ps_) return {kNoNode, 0};
  const NodeId c = children_.find(node, child_key(path.data() + pos));
  if (c == ChildTable::kNone) return {kNoNode, 0};
  const Node& cn = nodes_[c];
  size_t len = common_prefix(cn.tokens.data(), path.data() + pos,
                             std::min(cn.tokens.size(), path.size() - pos));
  len -= len % ps_;
  if (len == 0) return {kNoNode, 0};  // a first-page hash collision
  return {c, len};
}

int64_t RadixCache::forget(std::span<const std::vector<Token>> gone,
                           std::span<const std::vector<Token>> kept,
                           std::vector<std::vector<Token>>& dropped_paths) {
  last_evict_parents_.clear();
  // Nodes a kept path reaches, split where it leaves one partway.
  std::vector<uint8_t> keep(nodes_.size(), 0);
  for (const std::vector<Token>& path : kept) {
    NodeId node = kRootNode;
    size_t pos = 0;
    for (;;) {
      auto [c, len] = step(node, path, pos);
      if (c == kNoNode) break;
      const bool partial = len < nodes_[c].tokens.size();
      if (partial) c = split(c, len);
      if (keep.size() < nodes_.size()) keep.resize(nodes_.size(), 0);
      keep[c] = 1;
      node = c;
      pos += len;
      if (partial) break;
    }
  }
  if (keep.size() < nodes_.size()) keep.resize(nodes_.size(), 0);
  // On each gone path, the first node nothing keeps: it and its subtree go.
  // Locks and pins count from the root down (walk_ref), so a node no
  // request or pin holds has none below it either.
  std::vector<NodeId> tops;
  for (const std::vector<Token>& path : gone) {
    NodeId node = kRootNode;
    size_t pos = 0;
    for (;;) {
      auto [c, len] = step(node, path, pos);
      if (c == kNoNode) break;
      const Node& cn = nodes_[c];
      if (!keep[c] && cn.lock_ref == 0 && cn.pin_ref == 0) {
        tops.push_back(c);
        break;
      }
      node = c;
      pos += len;
      if (len < cn.tokens.size()) break;
    }
  }
  std::sort(tops.begin(), tops.end());
  tops.erase(std::unique(tops.begin(), tops.end()), tops.end());
  int64_t dropped = 0;
  for (NodeId top : tops) dropped += drop_subtree(top, dropped_paths);
  // Merges wait until every subtree went: merging a parent into a child
  // that is about to go would take the parent's kept tokens with it.
  for (NodeId parent : last_evict_parents_) {
    if (!nodes_[parent].alive) continue;
    if (nodes_[parent].n_children == 0)
      refresh_candidate(parent);
    else if (config_.merge_after_evict)
      try_merge(parent);
  }
  flush_events();
  return dropped;
}

int64_t RadixCache::drop_subtree(NodeId top, std::vector<std::vector<Token>>& dropped_paths) {
  // Preorder, then removed in reverse: each node is a leaf when it goes.
  std::vector<NodeId> order{top};
  for (size_t i = 0; i < order.size(); ++i)
    for (NodeId c = nodes_[order[i]].first_child; c != kNoNode; c = nodes_[c].next_sibling)
      order.push_back(c);
  const NodeId parent = nodes_[top].parent;
  int64_t dropped = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId x = *it;
    Node& xn = nodes_[x];
    RC_ASSERT(xn.alive && xn.n_children == 0 && xn.lock_ref == 0 && xn.pin_ref == 0);
    dropped_paths.emplace_back();
    path_of(x, dropped_paths.back());
    const int64_t pages = int64_t(xn.pages.size());
    const int64_t tokens = int64_t(xn.tokens.size());
    pool_.free_cached(xn.pages);
    evictable_pages_ -= pages;
    cached_tokens_ -= tokens;
    dropped += tokens;
    if (heap_.contains(x)) heap_.remove(x);
    emit(CacheEventKind::evict, x, xn.parent, kNoNode, size_t(tokens), size_t(pages));
    unlink_child(x);
    delete_node(x);
  }
  if (parent != kRootNode) last_evict_parents_.push_back(parent);
  return dropped;
}

}  // namespace rc

#include "panel/tree-model.h"

#include <algorithm>
#include <deque>

namespace rc::ui::panel {

namespace {
// A reset of a big tree would otherwise leave thousands of ghosts to draw.
constexpr size_t kMaxGhosts = 512;
}  // namespace

TreeModel::TreeModel() {
  TreeNode root;
  root.id = kRootNode;
  nodes_.emplace(kRootNode, std::move(root));
}

TreeNode* TreeModel::get(NodeId id) {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

const TreeNode* TreeModel::find(NodeId id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

void TreeModel::reset(const CacheSnapshot& snap, double now) {
  (void)now;
  nodes_.clear();
  for (const CacheNodeInfo& info : snap.nodes) {
    TreeNode n;
    n.id = info.id;
    n.parent = info.parent;
    n.tokens = info.tokens;
    n.pages = info.pages;
    n.lock_ref = info.lock_ref;
    n.pin_ref = info.pin_ref;
    n.last_access = info.last_access;
    n.hits = info.hits;
    nodes_.emplace(n.id, std::move(n));
  }
  if (!nodes_.count(kRootNode)) nodes_.emplace(kRootNode, TreeNode{});
  refresh_held_below(snap);
  // Children in id order: the best guess of creation order a snapshot gives.
  // Nodes whose parent is gone (hash blocks evicted before their children)
  // hang under the root so they stay visible.
  for (const CacheNodeInfo& info : snap.nodes) {
    if (info.id == kRootNode) continue;
    TreeNode* p = get(info.parent);
    (p ? p : get(kRootNode))->children.push_back(info.id);
  }
  policy_ = snap.policy;
  page_size_ = snap.page_size;
  total_pages_ = snap.total_pages;
  tick_ = snap.tick;
  next_seq_ = snap.next_seq;
  has_snapshot_ = true;
  last_match_node_ = kNoNode;
  last_match_tokens_ = 0;
  last_match_at_ = kNever;
  last_insert_node_ = kNoNode;
  refresh_depths(kRootNode);
  ++structure_version_;
  ++version_;
}

bool TreeModel::refresh_held_below(const CacheSnapshot& snap) {
  if (snap.held_below.size() != snap.nodes.size()) return false;  // no tiers
  bool changed = false;
  for (size_t i = 0; i < snap.nodes.size(); ++i) {
    TreeNode* n = get(snap.nodes[i].id);
    if (!n || n->held_below == snap.held_below[i]) continue;
    n->held_below = snap.held_below[i];
    changed = true;
  }
  if (changed) ++version_;
  return changed;
}

void TreeModel::refresh_depths(NodeId from) {
  std::deque<NodeId> todo{from};
  while (!todo.empty()) {
    TreeNode& n = nodes_.at(todo.front());
    todo.pop_front();
    const int64_t end = n.depth_tokens + int64_t(n.tokens.size());
    for (NodeId c : n.children) {
      nodes_.at(c).depth_tokens = end;
      todo.push_back(c);
    }
  }
}

void TreeModel::touch_to_root(NodeId id, uint64_t tick, bool hit, double now, bool mark_match) {
  for (TreeNode* n = get(id); n; n = n->id == kRootNode ? nullptr : get(n->parent)) {
    n->last_access = tick;
    if (hit) ++n->hits;
    if (mark_match) n->matched_at = now;
  }
}

// Validates the whole walk before changing anything, so a refused event
// leaves the model untouched.
bool TreeModel::refs_to_root(NodeId id, int delta, bool pin) {
  std::vector<TreeNode*> path;
  for (TreeNode* n = get(id); n && n->id != kRootNode; n = get(n->parent)) {
    const uint32_t v = pin ? n->pin_ref : n->lock_ref;
    if (delta < 0 && v == 0) return false;
    path.push_back(n);
  }
  for (TreeNode* n : path) (pin ? n->pin_ref : n->lock_ref) += delta;
  return true;
}

void TreeModel::replace_child(NodeId parent, NodeId old_child, NodeId new_child) {
  TreeNode* p = get(parent);
  if (!p) p = get(kRootNode);  // an orphan shown under the root
  auto it = std::find(p->children.begin(), p->children.end(), old_child);
  if (it != p->children.end())
    *it = new_child;
  else
    p->children.push_back(new_child);
}

void TreeModel::remove_child(NodeId parent, NodeId child) {
  TreeNode* p = get(parent);
  for (TreeNode* holder : {p, get(kRootNode)}) {
    if (!holder) continue;
    auto it = std::find(holder->children.begin(), holder->children.end(), child);
    if (it != holder->children.end()) {
      holder->children.erase(it);
      return;
    }
  }
}

void TreeModel::bury(const TreeNode& n, double now) {
  if (ghosts_.size() >= kMaxGhosts) ghosts_.erase(ghosts_.begin());
  Ghost g;
  g.node = n;
  g.node.children.clear();
  g.died_at = now;
  g.parent = n.parent;
  g.serial = ++ghost_serial_;
  ghosts_.push_back(std::move(g));
}

void TreeModel::expire_ghosts(double now, double max_age) {
  std::erase_if(ghosts_, [&](const Ghost& g) { return now - g.died_at > max_age; });
}

TreeModel::Change TreeModel::apply_insert(const CacheEvent& e, double now) {
  if (e.token_count == 0) {  // the key was cached already: recency only
    if (!get(e.node)) return Change::resync;
    touch_to_root(e.node, e.tick, false, now, false);
    return Change::recency;
  }
  TreeNode* p = get(e.parent);
  if (!p || get(e.node) || e.tokens.size() != e.token_count) return Change::resync;
  TreeNode n;
  n.id = e.node;
  n.parent = e.parent;
  n.tokens = e.tokens;
  n.pages = e.pages;
  n.depth_tokens = p->depth_tokens + int64_t(p->tokens.size());
  n.inserted_at = now;
  p->children.push_back(e.node);
  nodes_.emplace(e.node, std::move(n));
  touch_to_root(e.node, e.tick, false, now, false);
  last_insert_node_ = e.node;
  return Change::structure;
}

TreeModel::Change TreeModel::apply_split(const CacheEvent& e, double now) {
  TreeNode* low = get(e.other);
  if (!low || get(e.node) || low->parent != e.parent || e.token_count == 0 ||
      e.token_count >= low->tokens.size() || e.page_count > low->pages.size())
    return Change::resync;
  TreeNode up;
  up.id = e.node;
  up.parent = e.parent;
  up.tokens.assign(low->tokens.begin(), low->tokens.begin() + e.token_count);
  up.pages.assign(low->pages.begin(), low->pages.begin() + e.page_count);
  low->tokens.erase(low->tokens.begin(), low->tokens.begin() + e.token_count);
  low->pages.erase(low->pages.begin(), low->pages.begin() + e.page_count);
  up.lock_ref = low->lock_ref;
  up.pin_ref = low->pin_ref;
  up.hits = low->hits;
  up.last_access = low->last_access = e.tick;
  up.depth_tokens = low->depth_tokens;
  low->depth_tokens = up.depth_tokens + int64_t(up.tokens.size());
  up.children.push_back(e.other);
  up.flashed_at = low->flashed_at = now;
  up.inserted_at = low->inserted_at;  // still "new" if the lower half was
  up.matched_at = low->matched_at;
  low->parent = e.node;
  replace_child(e.parent, e.other, e.node);
  nodes_.emplace(e.node, std::move(up));
  return Change::structure;
}

TreeModel::Change TreeModel::apply_merge(const CacheEvent& e, double now) {
  TreeNode* child = get(e.node);
  TreeNode* gone = get(e.other);
  if (!child || !gone || e.other == kRootNode || child->parent != e.other ||
      gone->parent != e.parent)
    return Change::resync;
  child->tokens.insert(child->tokens.begin(), gone->tokens.begin(), gone->tokens.end());
  child->pages.insert(child->pages.begin(), gone->pages.begin(), gone->pages.end());
  child->hits = std::max(child->hits, gone->hits);
  child->parent = e.parent;
  child->depth_tokens = gone->depth_tokens;
  child->flashed_at = now;
  replace_child(e.parent, e.other, e.node);
  nodes_.erase(e.other);
  return Change::structure;
}

TreeModel::Change TreeModel::apply_evict(const CacheEvent& e, double now) {
  TreeNode* n = get(e.node);
  if (!n || e.node == kRootNode) return Change::resync;
  bury(*n, now);
  // Hash blocks can go before their children: those hang under the root.
  for (NodeId c : n->children) get(kRootNode)->children.push_back(c);
  remove_child(n->parent, e.node);
  if (last_match_node_ == e.node) last_match_node_ = kNoNode;
  if (last_insert_node_ == e.node) last_insert_node_ = kNoNode;
  nodes_.erase(e.node);
  return Change::structure;
}

TreeModel::Change TreeModel::apply_reset(const CacheEvent& e, double now) {
  const bool small = nodes_.size() <= kMaxGhosts / 2;
  for (auto& [id, n] : nodes_)
    if (id != kRootNode && small) bury(n, now);
  TreeNode root = std::move(nodes_.at(kRootNode));
  root.children.clear();
  root.last_access = e.tick;
  nodes_.clear();
  nodes_.emplace(kRootNode, std::move(root));
  last_match_node_ = last_insert_node_ = kNoNode;
  return Change::structure;
}

// Tier notes: the node set does not change, only its marks. A demoted
// node's eviction follows, so its ghost keeps demoted_at ("sunk", not lost).
// A promotion's tokens end at `node` and may span its ancestors.
TreeModel::Change TreeModel::apply_tier(const CacheEvent& e, double now) {
  TreeNode* n = get(e.node);
  if (!n) return Change::resync;
  if (e.kind == CacheEventKind::demote) {
    n->demoted_at = now;
    n->held_below = std::max<uint32_t>(n->held_below, e.token_count);
    ++tier_counts_.demotions;
    tier_counts_.demoted_tokens += e.token_count;
    return Change::recency;
  }
  ++tier_counts_.promotions;
  tier_counts_.promoted_tokens += e.token_count;
  int64_t left = e.token_count;
  for (TreeNode* p = n; p && p->id != kRootNode && left > 0; p = get(p->parent)) {
    p->promoted_at = now;
    left -= int64_t(p->tokens.size());
  }
  return Change::recency;
}

// A verified draft: counted; its source node (none for a prompt-lookup
// draft) is marked, adding to a mark that has not faded yet.
TreeModel::Change TreeModel::apply_draft(const CacheEvent& e, double now) {
  TreeNode* n = nullptr;
  if (e.node != kNoNode && !(n = get(e.node))) return Change::resync;
  const uint32_t kept = std::min(e.page_count, e.token_count);  // page_count: accepted
  ++draft_counts_.drafts;
  draft_counts_.drafted_tokens += e.token_count;
  draft_counts_.accepted_tokens += kept;
  if (!n) return Change::recency;
  ++draft_counts_.tree_drafts;
  if (now - n->drafted_at >= kDraftGlow) n->draft_tokens = n->draft_kept = 0;
  n->drafted_at = now;
  n->draft_tokens += e.token_count;
  n->draft_kept += kept;
  return Change::recency;
}

TreeModel::Change TreeModel::apply_kind(const CacheEvent& e, double now) {
  switch (e.kind) {
    case CacheEventKind::insert:
      return apply_insert(e, now);
    case CacheEventKind::split:
      return apply_split(e, now);
    case CacheEventKind::merge:
      return apply_merge(e, now);
    case CacheEventKind::match:
      if (!get(e.node)) return Change::resync;
      touch_to_root(e.node, e.tick, true, now, true);
      last_match_node_ = e.node;
      last_match_tokens_ = e.token_count;
      last_match_at_ = now;
      return Change::recency;
    case CacheEventKind::lock:
    case CacheEventKind::unlock:
    case CacheEventKind::pin:
    case CacheEventKind::unpin: {
      if (!get(e.node)) return Change::resync;
      const bool pin = e.kind == CacheEventKind::pin || e.kind == CacheEventKind::unpin;
      const int delta = e.kind == CacheEventKind::lock || e.kind == CacheEventKind::pin ? 1 : -1;
      return refs_to_root(e.node, delta, pin) ? Change::recency : Change::resync;
    }
    case CacheEventKind::evict:
      return apply_evict(e, now);
    case CacheEventKind::reset:
      return apply_reset(e, now);
    case CacheEventKind::demote:
    case CacheEventKind::promote:
      return apply_tier(e, now);
    case CacheEventKind::draft:
      return apply_draft(e, now);
  }
  return Change::resync;  // an event kind this model does not know
}

ApplyResult TreeModel::apply(const CacheEvent& e, double now) {
  if (!has_snapshot_) return ApplyResult::needs_resync;
  if (e.seq < next_seq_) return ApplyResult::skipped;
  if (e.seq > next_seq_) return ApplyResult::needs_resync;
  const Change c = apply_kind(e, now);
  if (c == Change::resync) return ApplyResult::needs_resync;
  tick_ = std::max(tick_, e.tick);
  ++next_seq_;
  ++version_;
  if (c == Change::structure) ++structure_version_;
  return ApplyResult::applied;
}

std::vector<CacheNodeInfo> TreeModel::infos() const {
  std::vector<CacheNodeInfo> out;
  out.reserve(nodes_.size());
  for (const auto& [id, n] : nodes_) {
    CacheNodeInfo i;
    i.id = n.id;
    i.parent = n.parent;
    i.tokens = n.tokens;
    i.pages = n.pages;
    i.lock_ref = n.lock_ref;
    i.pin_ref = n.pin_ref;
    i.last_access = n.last_access;
    i.hits = n.hits;
    out.push_back(std::move(i));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

std::vector<Token> TreeModel::path_tokens(NodeId id) const {
  std::vector<const TreeNode*> chain;
  for (const TreeNode* n = find(id); n && n->id != kRootNode; n = find(n->parent))
    chain.push_back(n);
  std::vector<Token> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    out.insert(out.end(), (*it)->tokens.begin(), (*it)->tokens.end());
  return out;
}

NodeId TreeModel::locate(const std::vector<Token>& tokens, NodeId* partial) const {
  if (partial) *partial = kNoNode;
  const TreeNode* at = &root();
  size_t pos = 0;
  while (pos < tokens.size()) {
    const TreeNode* next = nullptr;
    size_t common = 0;
    // Paged trees key children by their first page, so several may start
    // with the same token: the one that agrees longest is the path.
    for (NodeId c : at->children) {
      const TreeNode* cn = find(c);
      if (!cn || cn->parent != at->id || cn->tokens.empty() || cn->tokens[0] != tokens[pos])
        continue;
      const size_t n = std::min(cn->tokens.size(), tokens.size() - pos);
      size_t k = 0;
      while (k < n && cn->tokens[k] == tokens[pos + k]) ++k;
      if (k > common) {
        common = k;
        next = cn;
      }
    }
    if (!next) break;
    if (common < next->tokens.size()) {
      if (partial) *partial = next->id;
      break;
    }
    at = next;
    pos += common;
  }
  return at->id;
}

TreeModel::Pages TreeModel::pages_by_state() const {
  Pages p;
  for (const auto& [id, n] : nodes_) {
    if (id == kRootNode) continue;
    const int64_t k = int64_t(n.pages.size());
    p.cached_tokens += int64_t(n.tokens.size());
    if (n.lock_ref > 0) {
      p.protected_pages += k;
    } else {
      p.evictable_pages += k;
      if (n.pin_ref > 0) p.pinned_pages += k;
    }
  }
  return p;
}

}  // namespace rc::ui::panel

// RadixCache: read-only views (snapshot, stats) and the invariant checker.
#include <string>

#include "cache/radix-cache.h"

namespace rc {

CacheStats RadixCache::stats() const {
  CacheStats s = counters_;
  s.total_pages = pool_.total();
  s.free_pages = pool_.free_count();
  s.held_pages = pool_.held_count();
  s.evictable_pages = evictable_pages_;
  s.protected_pages = locked_pages_ + pool_.held_count();
  s.pinned_pages = pinned_pages_;
  s.cached_tokens = cached_tokens_;
  s.nodes = live_nodes_;
  s.bytes_per_page = pool_.bytes_per_page();
  return s;
}

CacheSnapshot RadixCache::snapshot() const {
  CacheSnapshot snap;
  snap.policy = config_.policy;
  snap.page_size = config_.page_size;
  snap.total_pages = pool_.total();
  snap.tick = tick_;
  snap.next_seq = events_.next_seq();
  snap.stats = stats();
  snap.nodes.reserve(size_t(live_nodes_) + 1);
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.alive) continue;
    CacheNodeInfo& info = snap.nodes.emplace_back();
    info.id = id;
    info.parent = n.parent;
    info.tokens = n.tokens;
    info.pages = n.pages;
    info.lock_ref = n.lock_ref;
    info.pin_ref = n.pin_ref;
    info.last_access = n.tick;
    info.hits = n.hits;
  }
  return snap;
}

namespace {
Status broken(NodeId id, const std::string& what) {
  return {StatusCode::internal, "cache invariant: node " + std::to_string(id) + ": " + what};
}
Status broken(const std::string& what) {
  return {StatusCode::internal, "cache invariant: " + what};
}
}  // namespace

Status RadixCache::check_tree(std::vector<uint8_t>& page_owned) const {
  int64_t visited = 0, evictable = 0, locked = 0, pinned = 0, tokens = 0, candidates = 0;
  std::vector<NodeId> stack = {kRootNode};
  const Node& root = nodes_[kRootNode];
  if (root.parent != kNoNode || !root.tokens.empty() || root.lock_ref || root.pin_ref)
    return broken(kRootNode, "root must be empty, parentless and unlocked");
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    const Node& n = nodes_[id];
    uint32_t kids = 0;
    for (NodeId c = n.first_child; c != kNoNode; c = nodes_[c].next_sibling) {
      if (c >= nodes_.size() || !nodes_[c].alive) return broken(id, "dead child linked");
      if (nodes_[c].parent != id) return broken(c, "parent pointer disagrees with sibling list");
      if (++kids > nodes_.size()) return broken(id, "cycle in sibling list");
      stack.push_back(c);
    }
    if (kids != n.n_children) return broken(id, "child count disagrees with sibling list");
    if (id == kRootNode) continue;
    ++visited;
    const Node& p = nodes_[n.parent];
    if (n.tokens.empty() || n.tokens.size() % ps_ != 0) return broken(id, "span not page-aligned");
    if (n.pages.size() != n.tokens.size() / ps_)
      return broken(id, "page count does not match span");
    if (n.key != child_key(n.tokens.data())) return broken(id, "child key does not match span");
    if (children_.find(n.parent, n.key) != id)
      return broken(id, "child table does not map to node");
    if (n.parent != kRootNode && (p.lock_ref < n.lock_ref || p.pin_ref < n.pin_ref))
      return broken(id, "lock or pin count exceeds its parent's (lock must walk to the root)");
    if (p.tick < n.tick) return broken(id, "newer than its parent (a touch must walk to the root)");
    for (PageId pg : n.pages) {
      if (!pool_.in_range(pg)) return broken(id, "page out of range");
      if (page_owned[size_t(pg)]++)
        return broken(id, "page " + std::to_string(pg) + " owned twice");
      if (pool_.state(pg) != PageState::cached) return broken(id, "owned page not marked cached");
    }
    const int64_t np = int64_t(n.pages.size());
    tokens += int64_t(n.tokens.size());
    if (n.lock_ref)
      locked += np;
    else
      evictable += np;
    if (n.pin_ref && !n.lock_ref) pinned += np;
    const bool candidate = n.n_children == 0 && n.lock_ref == 0;
    if (candidate != heap_.contains(id)) return broken(id, "LRU heap membership is wrong");
    candidates += candidate;
  }
  if (visited != live_nodes_) return broken("unreachable or missing nodes");
  if (int64_t(children_.size()) != live_nodes_) return broken("child table size != node count");
  if (int64_t(heap_.size()) != candidates) return broken("LRU heap holds non-candidates");
  const bool gdsf = config_.eviction == Eviction::gdsf;
  for (const LruHeap::Item& it : heap_.items()) {
    const Node& n = nodes_[it.node];
    if (it.key != LruHeap::make_key(n.pin_ref > 0, n.priority) || it.tie != (gdsf ? n.tick : 0) ||
        (!gdsf && n.priority != n.tick) || (gdsf && n.priority > gdsf_clock_ + n.hits))
      return broken(it.node, "stale eviction key");
  }
  if (tokens != cached_tokens_) return broken("cached token count drifted");
  if (evictable != evictable_pages_ || locked != locked_pages_ || pinned != pinned_pages_)
    return broken("evictable/protected/pinned accounting drifted");
  return {};
}

Status RadixCache::check_integrity() const {
  int64_t counts[4];
  if (!pool_.check(counts)) return broken("page pool free list disagrees with page states");
  if (counts[int(PageState::pending)] != 0) return broken("page left pending");
  std::vector<uint8_t> owned(size_t(pool_.total()), 0);
  if (Status s = check_tree(owned); !s.ok()) return s;
  if (counts[int(PageState::cached)] != evictable_pages_ + locked_pages_)
    return broken("pages marked cached that no node owns");
  const int64_t prot = locked_pages_ + pool_.held_count();
  if (pool_.free_count() + evictable_pages_ + prot != pool_.total())
    return broken("free + evictable + protected != total pages");
  for (NodeId p : config_.merge_after_evict ? last_evict_parents_ : std::vector<NodeId>{}) {
    const Node& n = nodes_[p];
    if (!n.alive || n.n_children != 1) continue;
    const Node& c = nodes_[n.first_child];
    if (!n.lock_ref && !c.lock_ref && !n.pin_ref && !c.pin_ref && n.tick == c.tick)
      return broken(p, "mergeable pair left after eviction");
  }
  return {};
}

}  // namespace rc

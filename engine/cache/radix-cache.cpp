// RadixCache operations. Snapshot, stats and integrity checks live in
// radix-cache-check.cpp.
#include "cache/radix-cache.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "cache/span-compare.h"
#include "rc-assert.h"

namespace rc {

RadixCache::RadixCache(const CacheConfig& config, bool reuse)
    : config_(config),
      reuse_(reuse),
      ps_(size_t(config.page_size)),
      pool_(config.total_pages, config.page_size, config.shape),
      events_(config.events, config.event_capacity) {
  nodes_.reserve(1024);
  nodes_.emplace_back();
  nodes_[kRootNode].alive = true;
}

uint64_t RadixCache::child_key(const Token* first_page) const {
  if (ps_ == 1) return uint32_t(first_page[0]);
  return XXH3_64bits(first_page, ps_ * sizeof(Token));
}

NodeId RadixCache::new_node() {
  NodeId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = NodeId(nodes_.size());
    nodes_.emplace_back();
  }
  Node& n = nodes_[id];
  uint32_t gen = n.gen + 1;
  n = Node{};
  n.gen = gen;
  n.alive = true;
  ++live_nodes_;
  return id;
}

void RadixCache::delete_node(NodeId id) {
  Node& n = nodes_[id];
  RC_ASSERT(id != kRootNode && n.alive && n.n_children == 0);
  uint32_t gen = n.gen;
  n = Node{};  // releases the span memory now, not when the slot is reused
  n.gen = gen;
  free_ids_.push_back(id);
  --live_nodes_;
}

void RadixCache::link_child(NodeId parent, NodeId child) {
  Node& p = nodes_[parent];
  Node& c = nodes_[child];
  c.parent = parent;
  c.prev_sibling = kNoNode;
  c.next_sibling = p.first_child;
  if (p.first_child != kNoNode) nodes_[p.first_child].prev_sibling = child;
  p.first_child = child;
  ++p.n_children;
  children_.put(parent, c.key, child);
}

void RadixCache::unlink_child(NodeId child) {
  Node& c = nodes_[child];
  Node& p = nodes_[c.parent];
  children_.erase(c.parent, c.key);
  if (c.prev_sibling != kNoNode)
    nodes_[c.prev_sibling].next_sibling = c.next_sibling;
  else
    p.first_child = c.next_sibling;
  if (c.next_sibling != kNoNode) nodes_[c.next_sibling].prev_sibling = c.prev_sibling;
  --p.n_children;
  c.prev_sibling = c.next_sibling = kNoNode;
}

// `new_child` takes `old_child`'s place (same key, same sibling position).
void RadixCache::replace_child(NodeId old_child, NodeId new_child) {
  Node& o = nodes_[old_child];
  Node& n = nodes_[new_child];
  n.parent = o.parent;
  n.key = o.key;
  n.prev_sibling = o.prev_sibling;
  n.next_sibling = o.next_sibling;
  if (o.prev_sibling != kNoNode)
    nodes_[o.prev_sibling].next_sibling = new_child;
  else
    nodes_[o.parent].first_child = new_child;
  if (o.next_sibling != kNoNode) nodes_[o.next_sibling].prev_sibling = new_child;
  children_.put(o.parent, o.key, new_child);
  o.prev_sibling = o.next_sibling = kNoNode;
}

NodeId RadixCache::split(NodeId id, size_t at) {
  RC_ASSERT(at > 0 && at % ps_ == 0);
  NodeId u = new_node();  // may grow nodes_: take references only after
  Node& up = nodes_[u];
  Node& low = nodes_[id];
  RC_ASSERT(at < low.tokens.size());
  up.tokens.assign(low.tokens.begin(), low.tokens.begin() + ptrdiff_t(at));
  up.pages.assign(low.pages.begin(), low.pages.begin() + ptrdiff_t(at / ps_));
  low.tokens.erase(low.tokens.begin(), low.tokens.begin() + ptrdiff_t(at));
  low.pages.erase(low.pages.begin(), low.pages.begin() + ptrdiff_t(at / ps_));
  up.lock_ref = low.lock_ref;
  up.pin_ref = low.pin_ref;
  up.hits = low.hits;
  touch(up);  // both halves count as used now
  touch(low);
  replace_child(id, u);
  low.key = child_key(low.tokens.data());
  link_child(u, id);
  ++counters_.splits;
  emit(CacheEventKind::split, u, up.parent, id, at, at / ps_);
  refresh_candidate(id);
  return u;
}

void RadixCache::try_merge(NodeId parent) {
  Node& p = nodes_[parent];
  if (parent == kRootNode || p.n_children != 1) return;
  NodeId child = p.first_child;
  Node& c = nodes_[child];
  if (p.lock_ref || c.lock_ref || p.pin_ref || c.pin_ref || p.tick != c.tick) return;
  // The child keeps its id (a handle to the deeper node stays meaningful) and
  // absorbs the parent's span in front of its own.
  children_.erase(parent, c.key);
  p.first_child = kNoNode;
  p.n_children = 0;
  c.tokens.insert(c.tokens.begin(), p.tokens.begin(), p.tokens.end());
  c.pages.insert(c.pages.begin(), p.pages.begin(), p.pages.end());
  c.hits = std::max(c.hits, p.hits);
  c.priority = std::max(c.priority, p.priority);
  replace_child(parent, child);
  delete_node(parent);
  refresh_candidate(child);
  ++counters_.merges;
  emit(CacheEventKind::merge, child, nodes_[child].parent, parent, nodes_[child].tokens.size(),
       nodes_[child].pages.size());
}

void RadixCache::touch(Node& n) {
  n.tick = tick_;
  constexpr uint64_t kMaxPriority = (uint64_t(1) << 62) - 1;
  n.priority =
      config_.eviction == Eviction::gdsf ? std::min(gdsf_clock_ + n.hits, kMaxPriority) : n.tick;
}

void RadixCache::refresh_candidate(NodeId id) {
  if (id == kRootNode) return;
  const Node& n = nodes_[id];
  bool want = n.alive && n.n_children == 0 && n.lock_ref == 0;
  if (want) {
    const uint64_t key = LruHeap::make_key(n.pin_ref > 0, n.priority);
    const uint64_t tie = config_.eviction == Eviction::gdsf ? n.tick : 0;
    if (heap_.contains(id))
      heap_.update(id, key, tie);
    else
      heap_.push(id, key, tie);
  } else if (heap_.contains(id)) {
    heap_.remove(id);
  }
}

bool RadixCache::valid(NodeHandle h) const {
  return h.id < nodes_.size() && nodes_[h.id].alive && nodes_[h.id].gen == h.gen;
}

CacheEvent* RadixCache::emit(CacheEventKind kind, NodeId node, NodeId parent, NodeId other,
                             size_t tokens, size_t pages) {
  return events_.add(kind, node, parent, other, tokens, pages, tick_);
}

void RadixCache::flush_events() { events_.flush(); }

MatchResult RadixCache::match_prefix(std::span<const Token> key) {
  last_evict_parents_.clear();
  MatchResult r;
  ++tick_;
  ++counters_.match_calls;
  counters_.prompt_tokens += key.size();
  NodeId node = kRootNode;
  nodes_[kRootNode].tick = tick_;
  ++nodes_[kRootNode].hits;
  size_t pos = 0;
  const size_t n = key.size();
  if (reuse_ && n >= ps_) r.pages.reserve(n / ps_);
  while (reuse_ && n - pos >= ps_) {
    NodeId c = children_.find(node, child_key(key.data() + pos));
    if (c == ChildTable::kNone) break;
    const Node& cn = nodes_[c];
    size_t len =
        common_prefix(cn.tokens.data(), key.data() + pos, std::min(cn.tokens.size(), n - pos));
    len -= len % ps_;
    if (len == 0) break;  // first-page hash collision: a miss, never a wrong hit
    const bool partial = len < cn.tokens.size();
    if (partial) c = split(c, len);
    Node& m = nodes_[c];
    ++m.hits;
    touch(m);
    refresh_candidate(c);
    r.pages.insert(r.pages.end(), m.pages.begin(), m.pages.end());
    node = c;
    pos += len;
    if (partial) break;
  }
  r.tokens = int64_t(pos);
  r.node = handle(node);
  counters_.hit_tokens += pos;
  emit(CacheEventKind::match, node, nodes_[node].parent, kNoNode, pos, pos / ps_);
  flush_events();
  return r;
}

int64_t RadixCache::peek_prefix(std::span<const Token> key) const {
  NodeId node = kRootNode;
  size_t pos = 0;
  const size_t n = key.size();
  while (reuse_ && n - pos >= ps_) {
    const NodeId c = children_.find(node, child_key(key.data() + pos));
    if (c == ChildTable::kNone) break;
    const Node& cn = nodes_[c];
    size_t len =
        common_prefix(cn.tokens.data(), key.data() + pos, std::min(cn.tokens.size(), n - pos));
    len -= len % ps_;
    pos += len;
    if (len < cn.tokens.size()) break;
    node = c;
  }
  return int64_t(pos);
}

Continuation RadixCache::peek_continuation(std::span<const Token> key, size_t max_tokens) const {
  Continuation out;
  if (!reuse_ || key.empty() || max_tokens == 0) return out;
  // The node holding key's last token, and how far into it the key ends.
  // Children are keyed by their first page, so the key's last partial page
  // is matched against each child in turn.
  NodeId node = kRootNode;
  size_t pos = 0, at = 0;
  const size_t n = key.size();
  while (pos < n) {
    NodeId c = ChildTable::kNone;
    if (n - pos >= ps_) {
      c = children_.find(node, child_key(key.data() + pos));
    } else {
      for (NodeId x = nodes_[node].first_child; x != kNoNode; x = nodes_[x].next_sibling) {
        const std::vector<Token>& t = nodes_[x].tokens;
        if (t.size() >= n - pos && std::equal(key.begin() + pos, key.end(), t.begin())) {
          c = x;
          break;
        }
      }
    }
    if (c == ChildTable::kNone) return out;
    const std::vector<Token>& t = nodes_[c].tokens;
    const size_t len = common_prefix(t.data(), key.data() + pos, std::min(t.size(), n - pos));
    if (len < std::min(t.size(), n - pos)) return out;  // the tree went another way
    pos += len;
    node = c;
    at = len;
  }
  // The rest of that node, then the busiest child down.
  while (out.tokens.size() < max_tokens) {
    const std::vector<Token>& t = nodes_[node].tokens;
    const size_t take = std::min(t.size() - at, max_tokens - out.tokens.size());
    out.tokens.insert(out.tokens.end(), t.begin() + at, t.begin() + at + take);
    if (take > 0) out.node = handle(node);
    NodeId best = kNoNode;
    for (NodeId x = nodes_[node].first_child; x != kNoNode; x = nodes_[x].next_sibling) {
      if (best == kNoNode || nodes_[x].hits > nodes_[best].hits ||
          (nodes_[x].hits == nodes_[best].hits && nodes_[x].tick > nodes_[best].tick)) {
        best = x;
      }
    }
    if (best == kNoNode) break;
    node = best;
    at = 0;
  }
  return out;
}

Status RadixCache::walk_ref(NodeHandle h, bool lock, int delta) {
  last_evict_parents_.clear();
  if (!valid(h)) return {StatusCode::invalid_argument, "stale or unknown cache node handle"};
  const NodeId id = h.id;
  if (id != kRootNode && delta < 0 && (lock ? nodes_[id].lock_ref : nodes_[id].pin_ref) == 0)
    return {StatusCode::invalid_argument,
            lock ? "unlock of a node that is not locked" : "unpin of a node that is not pinned"};
  // Refs are monotone along a path (an ancestor's count includes every
  // descendant's), so checking the handle's node above is enough.
  for (NodeId x = id; x != kRootNode; x = nodes_[x].parent) {
    Node& n = nodes_[x];
    const int64_t pages = int64_t(n.pages.size());
    if (lock) {
      if (delta > 0 && n.lock_ref++ == 0) {
        evictable_pages_ -= pages;
        locked_pages_ += pages;
        if (n.pin_ref) pinned_pages_ -= pages;
      } else if (delta < 0 && --n.lock_ref == 0) {
        evictable_pages_ += pages;
        locked_pages_ -= pages;
        if (n.pin_ref) pinned_pages_ += pages;
      }
    } else {
      if (delta > 0 && n.pin_ref++ == 0 && !n.lock_ref)
        pinned_pages_ += pages;
      else if (delta < 0 && --n.pin_ref == 0 && !n.lock_ref)
        pinned_pages_ -= pages;
    }
  }
  refresh_candidate(id);  // only the handle's node can be a leaf on this path
  const CacheEventKind kind = ref_event_kind(lock, delta);
  emit(kind, id, nodes_[id].parent, kNoNode, nodes_[id].tokens.size(), nodes_[id].pages.size());
  flush_events();
  return {};
}

Status RadixCache::lock(NodeHandle h) { return walk_ref(h, true, +1); }
Status RadixCache::unlock(NodeHandle h) { return walk_ref(h, true, -1); }
Status RadixCache::pin(NodeHandle h) { return walk_ref(h, false, +1); }
Status RadixCache::unpin(NodeHandle h) { return walk_ref(h, false, -1); }

Status RadixCache::alloc_pages(int64_t n, std::vector<PageId>& out) {
  last_evict_parents_.clear();
  if (n < 0) return {StatusCode::invalid_argument, "negative page count"};
  if (pool_.free_count() < n) evict((n - pool_.free_count()) * int64_t(ps_));
  if (!pool_.alloc(n, out)) {
    return {StatusCode::no_pages,
            "need " + std::to_string(n) + " pages, " + std::to_string(pool_.free_count()) +
                " free after eviction, " + std::to_string(locked_pages_ + pool_.held_count()) +
                " locked or held, of " + std::to_string(pool_.total())};
  }
  return {};
}

Status RadixCache::free_pages(std::span<const PageId> pages) {
  last_evict_parents_.clear();
  return pool_.free_held_checked(pages);
}

Result<InsertResult> RadixCache::insert(std::span<const Token> key, std::span<const PageId> pages) {
  last_evict_parents_.clear();
  const size_t n = key.size();
  if (n % ps_ != 0)
    return Status(StatusCode::invalid_argument,
                  "insert: key of " + std::to_string(n) + " tokens is not page-aligned");
  if (pages.size() != n / ps_)
    return Status(StatusCode::invalid_argument, "insert: " + std::to_string(pages.size()) +
                                                    " pages for " + std::to_string(n) + " tokens");
  // Only the range here: ownership is checked after the walk, where pages the
  // tree already owns need no state lookup (a random read per page would cost
  // more than the whole walk on a long cached prefix).
  for (PageId p : pages)
    if (!pool_.in_range(p))
      return Status(StatusCode::invalid_argument,
                    "insert: page " + std::to_string(p) + " is out of range");
  ++tick_;
  ++counters_.inserts;
  InsertResult r;
  r.pages.reserve(pages.size());
  NodeId node = kRootNode;
  nodes_[kRootNode].tick = tick_;
  size_t pos = 0;
  while (pos < n) {
    NodeId c = children_.find(node, child_key(key.data() + pos));
    if (c == ChildTable::kNone) break;
    const Node& cn = nodes_[c];
    size_t len =
        common_prefix(cn.tokens.data(), key.data() + pos, std::min(cn.tokens.size(), n - pos));
    len -= len % ps_;
    if (len == 0) break;                            // hash collision on the first page: not cached
    if (len < cn.tokens.size()) c = split(c, len);  // the key ends (or turns) inside c
    Node& m = nodes_[c];
    touch(m);
    refresh_candidate(c);
    r.pages.insert(r.pages.end(), m.pages.begin(), m.pages.end());
    node = c;
    pos += len;
  }
  const size_t cached_pages = pos / ps_;
  // Every handed page that the tree does not already own must be held by the
  // caller: mark them pending so a page listed twice is caught too.
  size_t bad = pages.size();
  for (size_t i = 0; i < pages.size(); ++i) {
    if (i < cached_pages && pages[i] == r.pages[i]) continue;
    if (pool_.state(pages[i]) != PageState::held) {
      bad = i;
      break;
    }
    pool_.set_state(pages[i], PageState::pending);
  }
  if (bad < pages.size()) {
    for (size_t i = 0; i < bad; ++i)
      if (pool_.state(pages[i]) == PageState::pending) pool_.set_state(pages[i], PageState::held);
    // Splits and recency already happened (harmless); record them for replay.
    emit(CacheEventKind::insert, node, nodes_[node].parent, kNoNode, 0, 0);
    flush_events();
    return Status(StatusCode::invalid_argument, "insert: page " + std::to_string(pages[bad]) +
                                                    " is neither the cache's own nor held");
  }
  for (size_t i = 0; i < cached_pages; ++i) {
    if (pages[i] == r.pages[i]) continue;
    pool_.set_state(pages[i], PageState::held);
    pool_.free_held(pages[i]);  // duplicate: someone cached this prefix meanwhile
  }
  r.cached_tokens = int64_t(pos);
  if (pos < n) {
    NodeId leaf = new_node();
    Node& l = nodes_[leaf];
    l.tokens.assign(key.begin() + ptrdiff_t(pos), key.end());
    l.pages.assign(pages.begin() + ptrdiff_t(cached_pages), pages.end());
    for (PageId p : l.pages) {
      pool_.set_state(p, PageState::held);
      pool_.adopt(p);
    }
    l.key = child_key(l.tokens.data());
    touch(l);
    link_child(node, leaf);
    refresh_candidate(node);
    refresh_candidate(leaf);
    const int64_t added = int64_t(l.pages.size());
    evictable_pages_ += added;
    cached_tokens_ += int64_t(n - pos);
    counters_.inserted_tokens += n - pos;
    r.pages.insert(r.pages.end(), l.pages.begin(), l.pages.end());
    if (CacheEvent* e =
            emit(CacheEventKind::insert, leaf, node, kNoNode, l.tokens.size(), l.pages.size())) {
      e->tokens = l.tokens;
      e->pages = l.pages;
    }
    node = leaf;
  } else {
    emit(CacheEventKind::insert, node, nodes_[node].parent, kNoNode, 0, 0);
  }
  r.node = handle(node);
  flush_events();
  return r;
}

int64_t RadixCache::evict(int64_t n_tokens) {
  last_evict_parents_.clear();
  int64_t done = 0;
  while (done < n_tokens && !heap_.empty()) {
    const NodeId x = heap_.pop();
    Node& xn = nodes_[x];
    if (config_.eviction == Eviction::gdsf) gdsf_clock_ = std::max(gdsf_clock_, xn.priority);
    RC_ASSERT(xn.alive && xn.n_children == 0 && xn.lock_ref == 0);  // only unlocked leaves go
    const int64_t pages = int64_t(xn.pages.size());
    const int64_t tokens = int64_t(xn.tokens.size());
    pool_.free_cached(xn.pages);
    evictable_pages_ -= pages;
    if (xn.pin_ref) pinned_pages_ -= pages;
    cached_tokens_ -= tokens;
    done += tokens;
    ++counters_.evictions;
    counters_.evicted_tokens += uint64_t(tokens);
    const NodeId parent = xn.parent;
    if (tier_probe_ && config_.events) {
      path_of(x, probe_path_);  // for the probe's block keys
      const int64_t held = tier_probe_(probe_path_, int64_t(probe_path_.size()) - tokens);
      if (held > 0) {
        counters_.demoted_tokens += uint64_t(held);
        emit(CacheEventKind::demote, x, parent, kNoNode, size_t(held), 0);
      }
    }
    emit(CacheEventKind::evict, x, parent, kNoNode, size_t(tokens), size_t(pages));
    unlink_child(x);
    delete_node(x);
    if (parent == kRootNode) continue;
    last_evict_parents_.push_back(parent);
    // A parent whose last child went becomes a candidate itself.
    if (nodes_[parent].n_children == 0)
      refresh_candidate(parent);
    else if (config_.merge_after_evict)
      try_merge(parent);
  }
  flush_events();
  return done;
}

void RadixCache::path_of(NodeId id, std::vector<Token>& out) const {
  size_t len = 0;
  for (NodeId up = id; up != kRootNode; up = nodes_[up].parent) len += nodes_[up].tokens.size();
  out.resize(len);
  for (NodeId up = id; up != kRootNode; up = nodes_[up].parent) {
    len -= nodes_[up].tokens.size();
    std::copy(nodes_[up].tokens.begin(), nodes_[up].tokens.end(), out.begin() + long(len));
  }
}

void RadixCache::note_promoted(NodeHandle node, int64_t tokens) {
  if (!valid(node) || tokens <= 0) return;
  counters_.promoted_tokens += uint64_t(tokens);
  emit(CacheEventKind::promote, node.id, nodes_[node.id].parent, kNoNode, size_t(tokens), 0);
  flush_events();
}

void RadixCache::note_draft(NodeHandle from, int64_t drafted, int64_t accepted) {
  if (drafted <= 0) return;
  const bool known = valid(from);
  emit(CacheEventKind::draft, known ? from.id : kNoNode, known ? nodes_[from.id].parent : kNoNode,
       kNoNode, size_t(drafted), size_t(std::clamp<int64_t>(accepted, 0, drafted)));
  flush_events();
}

Status RadixCache::reset() {
  last_evict_parents_.clear();
  if (locked_pages_ > 0)
    return {StatusCode::invalid_argument,
            "reset: " + std::to_string(locked_pages_) + " pages are locked by requests in flight"};
  for (NodeId id = 1; id < nodes_.size(); ++id)
    if (nodes_[id].alive) pool_.free_cached(nodes_[id].pages);
  // Keep the generation counters so handles from before the reset stay stale.
  for (NodeId id = 1; id < nodes_.size(); ++id) {
    Node& n = nodes_[id];
    if (!n.alive) continue;
    uint32_t gen = n.gen;
    n = Node{};
    n.gen = gen;
  }
  free_ids_.clear();
  for (NodeId id = NodeId(nodes_.size()); id-- > 1;) free_ids_.push_back(id);
  Node& root = nodes_[kRootNode];
  root.first_child = kNoNode;
  root.n_children = 0;
  ++tick_;
  root.tick = tick_;
  children_.clear();
  heap_.clear();
  gdsf_clock_ = 0;
  live_nodes_ = 0;
  cached_tokens_ = 0;
  evictable_pages_ = 0;
  pinned_pages_ = 0;
  emit(CacheEventKind::reset, kRootNode, kNoNode, kNoNode, 0, 0);
  flush_events();
  return {};
}

}  // namespace rc

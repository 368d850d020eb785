#include "cache/hash-cache.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "rc-assert.h"

namespace rc {

namespace {
constexpr uint64_t kRootHash = 0x52616469784368ull;  // any constant: the chain's seed
}

HashCache::HashCache(const CacheConfig& config)
    : config_(config),
      ps_(size_t(config.page_size)),
      pool_(config.total_pages, config.page_size, config.shape),
      events_(config.events, config.event_capacity) {
  blocks_.emplace_back();
  blocks_[kRootNode].alive = true;
  blocks_[kRootNode].hash = kRootHash;
  tokens_.resize(ps_);
}

uint64_t HashCache::chain_hash(uint64_t parent_hash, const Token* block) const {
  return XXH3_64bits_withSeed(block, ps_ * sizeof(Token), parent_hash);
}

NodeId HashCache::lookup(NodeId parent, uint64_t hash, const Token* block) const {
  NodeId id = table_.find(0, hash);
  if (id == ChildTable::kNone) return kNoNode;
  const Block& b = blocks_[id];
  // Verify: a 64-bit collision must be a miss, never another prompt's KV.
  if (b.parent != parent || b.parent_gen != blocks_[parent].gen) return kNoNode;
  if (std::memcmp(block_tokens(id), block, ps_ * sizeof(Token)) != 0) return kNoNode;
  return id;
}

NodeId HashCache::new_block() {
  NodeId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = NodeId(blocks_.size());
    blocks_.emplace_back();
    tokens_.resize(tokens_.size() + ps_);
  }
  Block& b = blocks_[id];
  uint32_t gen = b.gen + 1;
  b = Block{};
  b.gen = gen;
  b.alive = true;
  ++live_blocks_;
  return id;
}

void HashCache::enqueue(NodeId id) {
  Block& b = blocks_[id];
  RC_ASSERT(!b.queued && b.ref == 0);
  Queue& q = queue_of(b);
  b.prev = q.tail;
  b.next = kNoNode;
  if (q.tail != kNoNode)
    blocks_[q.tail].next = id;
  else
    q.head = id;
  q.tail = id;
  ++q.size;
  b.queued = true;
}

void HashCache::dequeue(NodeId id) {
  Block& b = blocks_[id];
  RC_ASSERT(b.queued);
  Queue& q = queue_of(b);
  if (b.prev != kNoNode)
    blocks_[b.prev].next = b.next;
  else
    q.head = b.next;
  if (b.next != kNoNode)
    blocks_[b.next].prev = b.prev;
  else
    q.tail = b.prev;
  b.prev = b.next = kNoNode;
  --q.size;
  b.queued = false;
}

bool HashCache::parent_alive(const Block& b) const {
  return b.parent != kNoNode && blocks_[b.parent].alive && blocks_[b.parent].gen == b.parent_gen;
}

// Marks the chain ending at `last` used now; unreferenced blocks go to the
// queue tail deepest first, so the shared prefix is the last to go.
void HashCache::touch_chain(NodeId last) {
  for (NodeId x = last; x != kRootNode && x != kNoNode;) {
    Block& b = blocks_[x];
    b.tick = tick_;
    if (b.queued) {
      dequeue(x);
      enqueue(x);
    }
    x = parent_alive(b) ? b.parent : kNoNode;
  }
  blocks_[kRootNode].tick = tick_;
}

bool HashCache::valid(NodeHandle h) const {
  return h.id < blocks_.size() && blocks_[h.id].alive && blocks_[h.id].gen == h.gen;
}

CacheEvent* HashCache::emit(CacheEventKind kind, NodeId node, NodeId parent, size_t tokens,
                            size_t pages) {
  return events_.add(kind, node, parent, kNoNode, tokens, pages, tick_);
}

void HashCache::flush_events() { events_.flush(); }

void HashCache::note_draft(NodeHandle from, int64_t drafted, int64_t accepted) {
  (void)from;
  if (drafted <= 0) return;
  emit(CacheEventKind::draft, kNoNode, kNoNode, size_t(drafted),
       size_t(std::clamp<int64_t>(accepted, 0, drafted)));
  flush_events();
}

MatchResult HashCache::match_prefix(std::span<const Token> key) {
  MatchResult r;
  ++tick_;
  ++counters_.match_calls;
  counters_.prompt_tokens += key.size();
  NodeId node = kRootNode;
  r.pages.reserve(key.size() / ps_);
  for (size_t pos = 0; pos + ps_ <= key.size(); pos += ps_) {
    const Token* blk = key.data() + pos;
    NodeId id = lookup(node, chain_hash(blocks_[node].hash, blk), blk);
    if (id == kNoNode) break;
    ++blocks_[id].hits;
    r.pages.push_back(blocks_[id].page);
    node = id;
  }
  ++blocks_[kRootNode].hits;
  touch_chain(node);
  r.tokens = int64_t(r.pages.size() * ps_);
  r.node = {node, blocks_[node].gen};
  counters_.hit_tokens += uint64_t(r.tokens);
  emit(CacheEventKind::match, node, blocks_[node].parent, size_t(r.tokens), r.pages.size());
  flush_events();
  return r;
}

int64_t HashCache::peek_prefix(std::span<const Token> key) const {
  NodeId node = kRootNode;
  size_t pos = 0;
  for (; pos + ps_ <= key.size(); pos += ps_) {
    const Token* blk = key.data() + pos;
    const NodeId id = lookup(node, chain_hash(blocks_[node].hash, blk), blk);
    if (id == kNoNode) break;
    node = id;
  }
  return int64_t(pos);
}

Status HashCache::walk_ref(NodeHandle h, bool lock, int delta) {
  if (!valid(h)) return {StatusCode::invalid_argument, "stale or unknown cache block handle"};
  if (h.id != kRootNode && delta < 0 && (lock ? blocks_[h.id].ref : blocks_[h.id].pin) == 0)
    return {StatusCode::invalid_argument,
            lock ? "unlock of a block that is not locked" : "unpin of a block that is not pinned"};
  for (NodeId x = h.id; x != kRootNode && x != kNoNode;) {
    Block& b = blocks_[x];
    if (b.queued) dequeue(x);
    if (lock) {
      if (delta > 0 && b.ref++ == 0)
        ++locked_blocks_;
      else if (delta < 0 && --b.ref == 0)
        --locked_blocks_;
    } else {
      b.pin = uint32_t(int(b.pin) + delta);
    }
    if (b.ref == 0) enqueue(x);  // back at the tail: unlocked now is "used now"
    x = parent_alive(b) ? b.parent : kNoNode;
  }
  const CacheEventKind kind = ref_event_kind(lock, delta);
  emit(kind, h.id, blocks_[h.id].parent, h.id == kRootNode ? 0 : ps_, h.id == kRootNode ? 0 : 1);
  flush_events();
  return {};
}

Status HashCache::lock(NodeHandle h) { return walk_ref(h, true, +1); }
Status HashCache::unlock(NodeHandle h) { return walk_ref(h, true, -1); }
Status HashCache::pin(NodeHandle h) { return walk_ref(h, false, +1); }
Status HashCache::unpin(NodeHandle h) { return walk_ref(h, false, -1); }

Status HashCache::alloc_pages(int64_t n, std::vector<PageId>& out) {
  if (n < 0) return {StatusCode::invalid_argument, "negative page count"};
  if (pool_.free_count() < n) evict((n - pool_.free_count()) * int64_t(ps_));
  if (!pool_.alloc(n, out))
    return {StatusCode::no_pages, "need " + std::to_string(n) + " pages, " +
                                      std::to_string(pool_.free_count()) +
                                      " free after eviction, of " + std::to_string(pool_.total())};
  return {};
}

Status HashCache::free_pages(std::span<const PageId> pages) {
  return pool_.free_held_checked(pages);
}

Result<InsertResult> HashCache::insert(std::span<const Token> key, std::span<const PageId> pages) {
  const size_t n = key.size();
  if (n % ps_ != 0 || pages.size() != n / ps_)
    return Status(StatusCode::invalid_argument,
                  "insert: key not page-aligned or page count mismatch");
  // Check first, change after: every handed page must be held or be the
  // cached block's own page for that position.
  std::vector<NodeId> found(pages.size(), kNoNode);
  {
    NodeId node = kRootNode;
    size_t i = 0;
    for (; i < pages.size(); ++i) {
      const Token* blk = key.data() + i * ps_;
      NodeId id = lookup(node, chain_hash(blocks_[node].hash, blk), blk);
      if (id == kNoNode) break;
      found[i] = node = id;
    }
    size_t bad = pages.size();
    for (size_t j = 0; j < pages.size(); ++j) {
      if (found[j] != kNoNode && blocks_[found[j]].page == pages[j]) continue;
      if (!pool_.in_range(pages[j]) || pool_.state(pages[j]) != PageState::held) {
        bad = j;
        break;
      }
      pool_.set_state(pages[j], PageState::pending);
    }
    for (size_t j = 0; j < pages.size(); ++j)
      if (j < bad && pool_.in_range(pages[j]) && pool_.state(pages[j]) == PageState::pending)
        pool_.set_state(pages[j], PageState::held);
    if (bad < pages.size())
      return Status(StatusCode::invalid_argument,
                    "insert: page " + std::to_string(pages[bad]) + " is neither cached nor held");
  }
  ++tick_;
  ++counters_.inserts;
  InsertResult r;
  r.pages.reserve(pages.size());
  NodeId node = kRootNode;
  bool cached_run = true;
  for (size_t i = 0; i < pages.size(); ++i) {
    const Token* blk = key.data() + i * ps_;
    if (cached_run && found[i] != kNoNode) {
      if (pages[i] != blocks_[found[i]].page) pool_.free_held(pages[i]);  // duplicate
      node = found[i];
      r.pages.push_back(blocks_[node].page);
      r.cached_tokens += int64_t(ps_);
      continue;
    }
    cached_run = false;
    const uint64_t h = chain_hash(blocks_[node].hash, blk);
    NodeId id = new_block();
    Block& b = blocks_[id];
    b.hash = h;
    b.parent = node;
    b.parent_gen = blocks_[node].gen;
    b.page = pages[i];
    b.tick = tick_;
    pool_.adopt(pages[i]);
    std::memcpy(&tokens_[size_t(id) * ps_], blk, ps_ * sizeof(Token));
    // A live entry under this hash is another prefix (a collision): keep this
    // block out of the table, cached but unreachable, until LRU frees it.
    b.registered = table_.find(0, h) == ChildTable::kNone;
    if (b.registered) table_.put(0, h, id);
    enqueue(id);
    counters_.inserted_tokens += ps_;
    if (CacheEvent* e = emit(CacheEventKind::insert, id, node, ps_, 1)) {
      e->tokens.assign(blk, blk + ps_);
      e->pages = {pages[i]};
    }
    r.pages.push_back(pages[i]);
    node = id;
  }
  touch_chain(node);
  r.node = {node, blocks_[node].gen};
  flush_events();
  return r;
}

void HashCache::drop_block(NodeId id) {
  dequeue(id);
  Block& b = blocks_[id];
  RC_ASSERT(b.ref == 0);
  pool_.free_cached({&b.page, 1});
  if (b.registered) table_.erase(0, b.hash);
  emit(CacheEventKind::evict, id, b.parent, ps_, 1);
  uint32_t gen = b.gen;
  b = Block{};
  b.gen = gen;  // children keep a stale parent_gen: they are orphans now
  free_ids_.push_back(id);
  --live_blocks_;
}

int64_t HashCache::forget(std::span<const std::vector<Token>> gone,
                          std::span<const std::vector<Token>> kept,
                          std::vector<std::vector<Token>>& dropped_paths) {
  // The blocks of each path, in chain order.
  auto chain = [&](const std::vector<Token>& path) {
    std::vector<NodeId> ids;
    NodeId node = kRootNode;
    for (size_t pos = 0; pos + ps_ <= path.size(); pos += ps_) {
      const Token* blk = path.data() + pos;
      node = lookup(node, chain_hash(blocks_[node].hash, blk), blk);
      if (node == kNoNode) break;
      ids.push_back(node);
    }
    return ids;
  };
  std::vector<uint8_t> keep(blocks_.size(), 0);
  for (const std::vector<Token>& path : kept)
    for (NodeId id : chain(path)) keep[id] = 1;
  // A block's descendants off the gone paths become orphans that LRU
  // reclaims: no match can reach them once their parent is gone.
  int64_t dropped = 0;
  for (const std::vector<Token>& path : gone) {
    const std::vector<NodeId> ids = chain(path);
    for (size_t i = 0; i < ids.size(); ++i) {
      const Block& b = blocks_[ids[i]];
      if (keep[ids[i]] || b.ref != 0 || b.pin != 0) continue;
      keep[ids[i]] = 1;  // once
      dropped_paths.emplace_back(path.begin(), path.begin() + long((i + 1) * ps_));
      drop_block(ids[i]);
      dropped += int64_t(ps_);
    }
  }
  flush_events();
  return dropped;
}

int64_t HashCache::evict(int64_t n_tokens) {
  int64_t done = 0;
  while (done < n_tokens && (lru_.head != kNoNode || pinned_.head != kNoNode)) {
    drop_block(lru_.head != kNoNode ? lru_.head : pinned_.head);
    done += int64_t(ps_);
    ++counters_.evictions;
    counters_.evicted_tokens += ps_;
  }
  flush_events();
  return done;
}

Status HashCache::reset() {
  if (locked_blocks_ > 0)
    return {StatusCode::invalid_argument, "reset: " + std::to_string(locked_blocks_) +
                                              " blocks are locked by requests in flight"};
  evict(INT64_MAX);
  ++tick_;
  blocks_[kRootNode].tick = tick_;
  emit(CacheEventKind::reset, kRootNode, kNoNode, 0, 0);
  flush_events();
  return {};
}

CacheStats HashCache::stats() const {
  CacheStats s = counters_;
  s.total_pages = pool_.total();
  s.free_pages = pool_.free_count();
  s.held_pages = pool_.held_count();
  s.evictable_pages = lru_.size + pinned_.size;
  s.pinned_pages = pinned_.size;
  s.protected_pages = locked_blocks_ + pool_.held_count();
  s.cached_tokens = live_blocks_ * int64_t(ps_);
  s.nodes = live_blocks_;
  s.bytes_per_page = pool_.bytes_per_page();
  return s;
}

CacheSnapshot HashCache::snapshot() const {
  CacheSnapshot snap;
  snap.policy = config_.policy;
  snap.page_size = config_.page_size;
  snap.total_pages = pool_.total();
  snap.tick = tick_;
  snap.next_seq = events_.next_seq();
  snap.stats = stats();
  for (NodeId id = 0; id < blocks_.size(); ++id) {
    const Block& b = blocks_[id];
    if (!b.alive) continue;
    CacheNodeInfo& info = snap.nodes.emplace_back();
    info.id = id;
    if (id != kRootNode) {
      info.parent = parent_alive(b) ? b.parent : kNoNode;  // kNoNode: orphaned block
      info.tokens.assign(block_tokens(id), block_tokens(id) + ps_);
      info.pages = {b.page};
    }
    info.lock_ref = b.ref;
    info.pin_ref = b.pin;
    info.last_access = b.tick;
    info.hits = b.hits;
  }
  return snap;
}

Status HashCache::check_integrity() const {
  auto broken = [](const std::string& what) {
    return Status(StatusCode::internal, "hash cache invariant: " + what);
  };
  int64_t counts[4];
  if (!pool_.check(counts)) return broken("page pool free list disagrees with page states");
  std::vector<uint8_t> owned(size_t(pool_.total()), 0);
  int64_t live = 0, locked = 0, queued = 0, pinned_q = 0;
  for (NodeId id = 1; id < blocks_.size(); ++id) {
    const Block& b = blocks_[id];
    if (!b.alive) continue;
    ++live;
    if (!pool_.in_range(b.page) || owned[size_t(b.page)]++) return broken("page owned twice");
    if (pool_.state(b.page) != PageState::cached) return broken("block page not marked cached");
    if (b.registered != (table_.find(0, b.hash) == id)) return broken("hash table disagrees");
    if (b.queued != (b.ref == 0)) return broken("free queue must hold exactly the ref-0 blocks");
    if (b.ref) ++locked;
    if (b.queued) (b.pin ? pinned_q : queued)++;
  }
  if (live != live_blocks_ || locked != locked_blocks_) return broken("block counts drifted");
  if (queued != lru_.size || pinned_q != pinned_.size) return broken("queue sizes drifted");
  if (counts[int(PageState::cached)] != live) return broken("cached pages without a block");
  if (pool_.free_count() + queued + pinned_q + locked + pool_.held_count() != pool_.total())
    return broken("free + evictable + protected != total pages");
  return {};
}

}  // namespace rc

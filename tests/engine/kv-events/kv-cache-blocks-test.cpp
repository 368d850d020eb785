// CacheBlockMapper against the cache itself: random request-shaped workloads
// (match, lock, alloc, insert, unlock, evict, reset) on a real radix cache
// with page sizes 1 and 4; every drained batch of cache events goes through
// the mapper, encode_batch, decode_batch and a BlockTree (what a subscriber
// holds). After every step the subscriber's blocks, each named by the token
// prefix its parent links spell, must equal the snapshot's pages, each named
// by the root-to-page token prefix. A resync midway (reset from a snapshot)
// must land on the same set.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "radixchat/cache.h"
#include "radixchat/kv-block-tree.h"
#include "radixchat/kv-cache-blocks.h"
#include "radixchat/kv-events.h"

namespace rc::kv_events {
namespace {

using Prefixes = std::multiset<std::vector<int64_t>>;

// Oracle: one entry per cached page, its token prefix from the root.
Prefixes snapshot_prefixes(const CacheSnapshot& s) {
  std::map<NodeId, const CacheNodeInfo*> by_id;
  for (const auto& n : s.nodes) by_id[n.id] = &n;
  Prefixes out;
  for (const auto& n : s.nodes) {
    if (n.id == kRootNode) continue;
    std::vector<int64_t> path;
    std::vector<const CacheNodeInfo*> chain;
    for (const CacheNodeInfo* p = &n; p->id != kRootNode; p = by_id.at(p->parent))
      chain.push_back(p);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const bool own = *it == &n;
      for (size_t i = 0; i < (*it)->tokens.size(); ++i) {
        path.push_back((*it)->tokens[i]);
        if (own && (i + 1) % size_t(s.page_size) == 0) out.insert(path);
      }
    }
  }
  return out;
}

// What the subscriber holds, read the same way through parent hash links.
Prefixes tree_prefixes(const BlockTree& t) {
  Prefixes out;
  for (const auto& [b, depth] : t.walk()) {
    std::vector<const Block*> chain;
    for (const Block* p = b; p; p = p->parent ? t.find(p->rank, *p->parent) : nullptr)
      chain.push_back(p);
    std::vector<int64_t> path;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      path.insert(path.end(), (*it)->token_ids.begin(), (*it)->token_ids.end());
    out.insert(path);
  }
  return out;
}

void publish(CacheBlockMapper& m, KvCache& c, BlockTree& sub, bool* resynced) {
  std::vector<CacheEvent> events;
  ASSERT_FALSE(c.events().drain(events));
  std::vector<Event> out;
  bool ok = true;
  for (const CacheEvent& e : events) ok = ok && m.apply(e, out);
  ASSERT_TRUE(ok) << "the mapper lost track of the tree";
  if (*resynced) {
    // A resync mid-stream: the subscriber is told to clear and re-store.
    out = m.reset(c.snapshot());
    *resynced = false;
  }
  Batch b;
  b.events = std::move(out);
  auto decoded = decode_batch(encode_batch(b));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  sub.apply(*decoded);
}

void run_workload(int page_size, uint32_t seed) {
  CacheConfig cfg;
  cfg.page_size = page_size;
  cfg.total_pages = 48;
  auto made = make_kv_cache(cfg);
  ASSERT_TRUE(made.ok());
  KvCache& c = **made;
  CacheBlockMapper m;
  BlockTree sub;
  Batch first;
  first.events = m.reset(c.snapshot());
  sub.apply(first);
  std::vector<CacheEvent> skipped;
  c.events().drain(skipped);  // the snapshot already reflects nothing
  std::mt19937 rng(seed);
  // Requests share a few prefixes so splits, hits and merges all happen.
  std::vector<std::vector<Token>> stems = {
      {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 9, 9, 9, 9}, {20, 21, 22, 23}};
  bool resync = false;
  for (int step = 0; step < 400; ++step) {
    if (step == 200) resync = true;
    if (rng() % 40 == 0) {
      ASSERT_TRUE(c.reset().ok());
    } else if (rng() % 6 == 0) {
      c.evict(int64_t(rng() % 16) + 1);
    } else {
      std::vector<Token> key = stems[rng() % stems.size()];
      const size_t extra = rng() % 12;
      for (size_t i = 0; i < extra; ++i) key.push_back(Token(30 + rng() % 5));
      key.resize(key.size() / size_t(page_size) * size_t(page_size));
      if (key.empty()) continue;
      MatchResult hit = c.match_prefix(key);
      ASSERT_TRUE(c.lock(hit.node).ok());
      std::vector<PageId> table = hit.pages;
      const int64_t need = int64_t(key.size()) / page_size - int64_t(hit.pages.size());
      if (c.alloc_pages(need, table).ok()) {
        auto r = c.insert(key, table);
        ASSERT_TRUE(r.ok()) << r.status().message();
      }
      ASSERT_TRUE(c.unlock(hit.node).ok());
    }
    publish(m, c, sub, &resync);
    ASSERT_TRUE(c.check_integrity().ok());
    const CacheSnapshot snap = c.snapshot();
    ASSERT_EQ(tree_prefixes(sub), snapshot_prefixes(snap)) << "step " << step;
    ASSERT_EQ(sub.size(), m.blocks());
    ASSERT_EQ(sub.stats().removed_unknown_blocks, 0u);
  }
  // The workload must have exercised every mapping, or the check says little.
  const CacheStats st = c.stats();
  EXPECT_GT(st.splits, 0u);
  EXPECT_GT(st.merges, 0u);
  EXPECT_GT(st.evictions, 0u);
  EXPECT_GT(sub.stats().cleared_events, 2u);
}

TEST(KvCacheBlocks, SubscriberMatchesTheCachePageForPageSize1) { run_workload(1, 7); }
TEST(KvCacheBlocks, SubscriberMatchesTheCachePageForPageSize4) { run_workload(4, 11); }

TEST(KvCacheBlocks, HashesChainLikeVllm) {
  // Same tokens under different parents hash differently; same path, same hash.
  const std::vector<Token> a = {1, 2}, b = {3, 4};
  const BlockHash ha = CacheBlockMapper::block_hash(std::nullopt, a);
  EXPECT_EQ(ha, CacheBlockMapper::block_hash(std::nullopt, a));
  EXPECT_NE(CacheBlockMapper::block_hash(ha, b), CacheBlockMapper::block_hash(std::nullopt, b));
  EXPECT_EQ(ha.size(), 9u);
  EXPECT_EQ(ha[0], 'i');
}

TEST(KvCacheBlocks, UnknownNodeAsksForResync) {
  CacheBlockMapper m;
  CacheSnapshot s;
  s.nodes.push_back(CacheNodeInfo{});
  m.reset(s);
  std::vector<Event> out;
  CacheEvent e;
  e.kind = CacheEventKind::evict;
  e.node = 42;
  EXPECT_FALSE(m.apply(e, out));
  e.kind = CacheEventKind::insert;
  e.node = 3;
  e.parent = 99;  // a parent the mirror never saw
  e.token_count = 1;
  e.tokens = {5};
  EXPECT_FALSE(m.apply(e, out));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace rc::kv_events

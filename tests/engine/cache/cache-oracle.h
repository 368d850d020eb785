// Two independent models used to judge the caches in the randomized tests.
//
// Oracle: the cache as a *set of cached page-aligned prefixes* with the page
// stored for each prefix's last page, plus lock and pin counts per prefix.
// It knows nothing about nodes, splits or ticks, so it predicts exactly what
// does not depend on them: match lengths and pages, insert results, which
// pages are freed as duplicates. For eviction it cannot know which node LRU
// picks, so it checks the rules every eviction must obey (never a locked
// prefix, pinned only when nothing else is left, enough tokens or everything
// evictable) and then adopts the tree's new contents.
//
// Replayer: a consumer of the event stream that starts from a snapshot and
// rebuilds every node field from events alone.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "radixchat/cache.h"

namespace rc::test {

using Prefix = std::vector<Token>;

struct Oracle {
  size_t ps = 1;
  std::map<Prefix, PageId> cached;  // page-aligned prefix -> page of its last page
  std::map<Prefix, int> locks, pins;

  static Prefix head(const std::vector<Token>& key, size_t n) {
    return {key.begin(), key.begin() + ptrdiff_t(n)};
  }

  size_t match_len(const std::vector<Token>& key) const {
    size_t n = 0;
    while (n + ps <= key.size() && cached.count(head(key, n + ps))) n += ps;
    return n;
  }
  std::vector<PageId> pages_of(const std::vector<Token>& key, size_t n) const {
    std::vector<PageId> out;
    for (size_t l = ps; l <= n; l += ps) out.push_back(cached.at(head(key, l)));
    return out;
  }
  void add_ref(std::map<Prefix, int>& refs, const std::vector<Token>& key, size_t n, int d) {
    for (size_t l = ps; l <= n; l += ps) {
      int& r = refs[head(key, l)];
      r += d;
      ASSERT_GE(r, 0);
      if (r == 0) refs.erase(head(key, l));
    }
  }
  bool locked(const Prefix& p) const { return locks.count(p) > 0; }
  bool pinned(const Prefix& p) const { return pins.count(p) > 0; }
};

// Page-aligned prefixes the cache can match, with the page of each, read
// from a snapshot (node granularity is irrelevant to the oracle). Orphaned
// hash blocks (their parent was evicted first) are cached but unreachable.
inline std::map<Prefix, PageId> cached_prefixes(const CacheSnapshot& s) {
  std::map<NodeId, const CacheNodeInfo*> by_id;
  for (const auto& n : s.nodes) by_id[n.id] = &n;
  std::map<Prefix, PageId> out;
  const size_t ps = size_t(s.page_size);
  for (const auto& n : s.nodes) {
    if (n.id == kRootNode) continue;
    std::vector<const CacheNodeInfo*> chain;
    const CacheNodeInfo* x = &n;
    for (; x->id != kRootNode && x->parent != kNoNode; x = by_id.at(x->parent)) chain.push_back(x);
    if (x->id != kRootNode) continue;  // a hash block whose parent is gone: unreachable
    Prefix path;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      path.insert(path.end(), (*it)->tokens.begin(), (*it)->tokens.end());
    const size_t start = path.size() - n.tokens.size();
    for (size_t l = start + ps, i = 0; l <= path.size(); l += ps, ++i)
      out[Prefix(path.begin(), path.begin() + ptrdiff_t(l))] = n.pages[i];
  }
  return out;
}

struct Replayer {
  std::map<NodeId, CacheNodeInfo> nodes;
  uint64_t next_seq = 0;

  void start(const CacheSnapshot& s) {
    nodes.clear();
    for (const auto& n : s.nodes) nodes[n.id] = n;
    next_seq = s.next_seq;
  }

  template <typename F>
  void up_to_root(NodeId id, bool include_root, F f) {
    for (NodeId x = id; x != kNoNode; x = nodes.at(x).parent) {
      if (x == kRootNode && !include_root) break;
      f(nodes.at(x));
    }
  }

  void apply(const CacheEvent& e) {
    ASSERT_EQ(e.seq, next_seq) << "gap in the event stream";
    ++next_seq;
    switch (e.kind) {
      case CacheEventKind::insert:
        if (e.token_count > 0) {
          CacheNodeInfo n;
          n.id = e.node;
          n.parent = e.parent;
          n.tokens = e.tokens;
          n.pages = e.pages;
          ASSERT_EQ(nodes.count(e.node), 0u);
          nodes[e.node] = n;
        }
        up_to_root(e.node, true, [&](CacheNodeInfo& n) { n.last_access = e.tick; });
        break;
      case CacheEventKind::split: {
        CacheNodeInfo& low = nodes.at(e.other);
        CacheNodeInfo up;
        up.id = e.node;
        up.parent = e.parent;
        up.tokens.assign(low.tokens.begin(), low.tokens.begin() + e.token_count);
        up.pages.assign(low.pages.begin(), low.pages.begin() + e.page_count);
        low.tokens.erase(low.tokens.begin(), low.tokens.begin() + e.token_count);
        low.pages.erase(low.pages.begin(), low.pages.begin() + e.page_count);
        low.parent = e.node;
        up.lock_ref = low.lock_ref;
        up.pin_ref = low.pin_ref;
        up.hits = low.hits;
        up.last_access = low.last_access = e.tick;
        nodes[e.node] = up;
        break;
      }
      case CacheEventKind::merge: {
        CacheNodeInfo& c = nodes.at(e.node);
        const CacheNodeInfo& p = nodes.at(e.other);
        c.tokens.insert(c.tokens.begin(), p.tokens.begin(), p.tokens.end());
        c.pages.insert(c.pages.begin(), p.pages.begin(), p.pages.end());
        c.hits = std::max(c.hits, p.hits);
        c.parent = e.parent;
        nodes.erase(e.other);
        break;
      }
      case CacheEventKind::match:
        up_to_root(e.node, true, [&](CacheNodeInfo& n) { n.last_access = e.tick, ++n.hits; });
        break;
      case CacheEventKind::lock:
      case CacheEventKind::unlock: {
        int d = e.kind == CacheEventKind::lock ? 1 : -1;
        up_to_root(e.node, false, [&](CacheNodeInfo& n) { n.lock_ref += uint32_t(d); });
        break;
      }
      case CacheEventKind::pin:
      case CacheEventKind::unpin: {
        int d = e.kind == CacheEventKind::pin ? 1 : -1;
        up_to_root(e.node, false, [&](CacheNodeInfo& n) { n.pin_ref += uint32_t(d); });
        break;
      }
      case CacheEventKind::demote:
      case CacheEventKind::promote:  // tier notes: the node set does not change
        ASSERT_EQ(nodes.count(e.node), 1u);
        break;
      case CacheEventKind::draft:  // names a node only when the draft came from it
        if (e.node != kNoNode) ASSERT_EQ(nodes.count(e.node), 1u);
        break;
      case CacheEventKind::evict:
        ASSERT_EQ(nodes.count(e.node), 1u);
        nodes.erase(e.node);
        // Radix evicts leaves only; a hash block's children become orphans.
        for (auto& [id, n] : nodes)
          if (n.parent == e.node) n.parent = kNoNode;
        break;
      case CacheEventKind::reset: {
        CacheNodeInfo root = nodes.at(kRootNode);
        root.last_access = e.tick;
        nodes.clear();
        nodes[kRootNode] = root;
        break;
      }
    }
  }

  // Equal to the snapshot, field by field. Without `recency`, last_access
  // and hits are left out: the hash cache stamps each block of a key on its
  // own (not the radix path-to-root rule this replayer models), so for it
  // the replay checks structure, pages and lock/pin counts.
  void expect_equal(const CacheSnapshot& s, bool recency = true) const {
    ASSERT_EQ(next_seq, s.next_seq);
    ASSERT_EQ(nodes.size(), s.nodes.size());
    for (const auto& n : s.nodes) {
      auto it = nodes.find(n.id);
      ASSERT_TRUE(it != nodes.end()) << "node " << n.id << " missing after replay";
      if (recency) {
        EXPECT_EQ(it->second, n) << "node " << n.id << " differs after replay";
        continue;
      }
      CacheNodeInfo replayed = it->second;
      replayed.last_access = n.last_access;
      replayed.hits = n.hits;
      EXPECT_EQ(replayed, n) << "node " << n.id << " differs after replay";
    }
  }
};

}  // namespace rc::test

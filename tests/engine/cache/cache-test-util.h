// Helpers shared by the cache suites: build caches, run the request
// protocol of docs/architecture.md section 5, read the tree back as plain strings.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "radixchat/cache.h"

namespace rc::test {

inline std::unique_ptr<KvCache> make_cache(CachePolicy policy, int page_size, int64_t pages,
                                           bool events = true) {
  CacheConfig cfg;
  cfg.policy = policy;
  cfg.page_size = page_size;
  cfg.total_pages = pages;
  cfg.events = events;
  auto r = make_kv_cache(cfg);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

inline std::vector<Token> chars(const std::string& s) { return {s.begin(), s.end()}; }

// One request as the runtime runs it: match, lock, allocate, insert the
// page-aligned key, free the unaligned tail, unlock: the core protocol only. When `keep_lock`, the
// inserted node stays locked (a request still running) and is returned.
struct Request {
  MatchResult match;
  InsertResult insert;
  Status status;
};

inline Request run_request(PrefixCache& c, const std::vector<Token>& key, bool keep_lock = false) {
  Request r;
  const int64_t ps = c.config().page_size;
  r.match = c.match_prefix(key);
  EXPECT_TRUE(c.lock(r.match.node).ok());
  const int64_t need = (int64_t(key.size()) - r.match.tokens + ps - 1) / ps;
  std::vector<PageId> table = r.match.pages;
  r.status = c.alloc_pages(need, table);
  if (!r.status.ok()) {
    EXPECT_TRUE(c.unlock(r.match.node).ok());
    return r;
  }
  const size_t aligned = key.size() / size_t(ps) * size_t(ps);
  auto ins =
      c.insert(std::span(key.data(), aligned), std::span(table.data(), aligned / size_t(ps)));
  EXPECT_TRUE(ins.ok()) << ins.status().to_string();
  r.insert = std::move(ins).value();
  if (table.size() > aligned / size_t(ps)) {
    Status freed = c.free_pages(std::span(table).subspan(aligned / size_t(ps)));
    EXPECT_TRUE(freed.ok()) << freed.to_string();
  }
  if (keep_lock) {
    EXPECT_TRUE(c.lock(r.insert.node).ok());
  }
  EXPECT_TRUE(c.unlock(r.match.node).ok());
  return r;
}

// Every root-to-node token string in the tree (the cached prefix set, at
// node granularity) keyed to its node.
inline std::map<std::vector<Token>, NodeId> node_paths(const CacheSnapshot& s) {
  std::map<NodeId, const CacheNodeInfo*> by_id;
  for (const auto& n : s.nodes) by_id[n.id] = &n;
  std::map<std::vector<Token>, NodeId> out;
  for (const auto& n : s.nodes) {
    if (n.id == kRootNode) continue;
    std::vector<const CacheNodeInfo*> chain;
    for (const CacheNodeInfo* x = &n; x && x->id != kRootNode;)
      chain.push_back(x), x = by_id.count(x->parent) ? by_id[x->parent] : nullptr;
    std::vector<Token> path;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      path.insert(path.end(), (*it)->tokens.begin(), (*it)->tokens.end());
    out[path] = n.id;
  }
  return out;
}

}  // namespace rc::test

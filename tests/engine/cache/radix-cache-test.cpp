// Targeted behaviour of the radix cache: the worked example, splits,
// duplicates, LRU order, pinning, exhaustion, merge, reset, handles.
#include <gtest/gtest.h>

#include "cache-oracle.h"
#include "cache-test-util.h"

namespace rc::test {
namespace {

void expect_ok(const KvCache& c) {
  Status s = c.check_integrity();
  EXPECT_TRUE(s.ok()) << s.to_string();
}

TEST(RadixCache, ClassicThreePhrasesCompressToFiveNodes) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("hello world"));
  run_request(*c, chars("hello vllm"));
  run_request(*c, chars("help me"));
  expect_ok(*c);
  CacheSnapshot s = c->snapshot();
  // root -> "hel" -> { "lo " -> { "world", "vllm" }, "p me" }
  ASSERT_EQ(s.nodes.size(), 6u) << "5 nodes under the root";
  EXPECT_EQ(c->node_count(), 5);
  std::map<std::string, NodeId> span_to_parent;
  std::map<NodeId, std::string> id_to_span;
  for (const auto& n : s.nodes) id_to_span[n.id] = std::string(n.tokens.begin(), n.tokens.end());
  for (const auto& n : s.nodes)
    if (n.id != kRootNode) span_to_parent[id_to_span[n.id]] = n.parent;
  ASSERT_EQ(span_to_parent.size(), 5u);
  EXPECT_EQ(span_to_parent["hel"], kRootNode);
  EXPECT_EQ(id_to_span[span_to_parent["lo "]], "hel");
  EXPECT_EQ(id_to_span[span_to_parent["p me"]], "hel");
  EXPECT_EQ(id_to_span[span_to_parent["world"]], "lo ");
  EXPECT_EQ(id_to_span[span_to_parent["vllm"]], "lo ");
  EXPECT_EQ(c->stats().cached_tokens, 3 + 3 + 5 + 4 + 4);
  EXPECT_EQ(c->free_page_count(), 64 - 19);
}

TEST(RadixCache, MatchReturnsPagesOfThePrefixAndSplits) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  Request a = run_request(*c, chars("abcdef"));
  MatchResult m = c->match_prefix(chars("abcxyz"));
  EXPECT_EQ(m.tokens, 3);
  EXPECT_EQ(m.pages, std::vector<PageId>(a.insert.pages.begin(), a.insert.pages.begin() + 3));
  EXPECT_EQ(c->node_count(), 2) << "the partial match split abcdef";
  EXPECT_EQ(c->stats().splits, 1u);
  expect_ok(*c);
}

TEST(RadixCache, PageSizeSixteenMatchesWholePagesOnly) {
  auto c = make_cache(CachePolicy::radix, 4, 64);
  std::vector<Token> a = chars("abcdefghijkl");  // 3 pages
  run_request(*c, a);
  std::vector<Token> b = chars("abcdefgXijklmn");  // differs inside page 2
  MatchResult m = c->match_prefix(b);
  EXPECT_EQ(m.tokens, 4);
  EXPECT_EQ(m.pages.size(), 1u);
  MatchResult short_key = c->match_prefix(chars("abc"));
  EXPECT_EQ(short_key.tokens, 0) << "less than a page never matches";
  expect_ok(*c);
}

TEST(RadixCache, InsertFreesDuplicatePagesAndReturnsCanonicalOnes) {
  auto c = make_cache(CachePolicy::radix, 1, 32);
  // Two requests computed the same prefix concurrently with their own pages.
  std::vector<PageId> p1, p2;
  ASSERT_TRUE(c->alloc_pages(4, p1).ok());
  ASSERT_TRUE(c->alloc_pages(4, p2).ok());
  auto r1 = c->insert(chars("abcd"), p1);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->cached_tokens, 0);
  const int64_t free_before = c->free_page_count();
  auto r2 = c->insert(chars("abcd"), p2);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->cached_tokens, 4);
  EXPECT_EQ(r2->pages, p1);
  EXPECT_EQ(r2->node, r1->node);
  EXPECT_EQ(c->free_page_count(), free_before + 4) << "the duplicates went back to the pool";
  expect_ok(*c);
}

TEST(RadixCache, InsertRejectsBadInputWithoutDamage) {
  auto c = make_cache(CachePolicy::radix, 2, 16);
  std::vector<PageId> p;
  ASSERT_TRUE(c->alloc_pages(2, p).ok());
  EXPECT_EQ(c->insert(chars("abc"), std::span(p.data(), 1)).status().code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(c->insert(chars("abcd"), std::span(p.data(), 1)).status().code(),
            StatusCode::invalid_argument);
  std::vector<PageId> twice = {p[0], p[0]};
  EXPECT_EQ(c->insert(chars("abcd"), twice).status().code(), StatusCode::invalid_argument);
  std::vector<PageId> unallocated = {p[0], 15};
  EXPECT_EQ(c->insert(chars("abcd"), unallocated).status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(c->free_pages(std::vector<PageId>{7}).code(), StatusCode::invalid_argument);
  EXPECT_EQ(c->stats().held_pages, 2);
  expect_ok(*c);
  ASSERT_TRUE(c->insert(chars("abcd"), p).ok());
  expect_ok(*c);
}

TEST(RadixCache, FailedInsertStillReplaysExactly) {
  auto c = make_cache(CachePolicy::radix, 1, 16);
  Replayer r;
  r.start(c->snapshot());
  run_request(*c, chars("abcdef"));
  std::vector<PageId> p;
  ASSERT_TRUE(c->alloc_pages(2, p).ok());
  // Splits "abcdef" at "abc" (recorded), then fails on the free page 15.
  std::vector<PageId> bad = {p[0], p[1], 15, 14};
  EXPECT_FALSE(c->insert(chars("abXY"), std::span(bad.data(), 4)).ok());
  MatchResult m = c->match_prefix(chars("abcdef"));
  std::vector<PageId> table = m.pages;
  EXPECT_EQ(c->insert(chars("abcdefgh"), table).status().code(), StatusCode::invalid_argument);
  std::vector<CacheEvent> events;
  c->events().drain(events);
  for (const CacheEvent& e : events) r.apply(e);
  r.expect_equal(c->snapshot());
  expect_ok(*c);
}

TEST(RadixCache, EvictsLeastRecentlyUsedLeafFirst) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("aaaa"));
  run_request(*c, chars("bbbb"));
  run_request(*c, chars("cccc"));
  c->match_prefix(chars("aaaa"));  // a is now the most recent
  EXPECT_EQ(c->evict(1), 4) << "whole nodes only";
  auto paths = node_paths(c->snapshot());
  EXPECT_TRUE(paths.count(chars("aaaa")));
  EXPECT_FALSE(paths.count(chars("bbbb")));
  EXPECT_TRUE(paths.count(chars("cccc")));
  expect_ok(*c);
}

// gdsf (radixchat/eviction.h): a leaf many requests matched outlives a
// more recent one matched once, where LRU takes the older.
TEST(RadixCache, GdsfKeepsWhatWasShared) {
  for (const Eviction e : {Eviction::lru, Eviction::gdsf}) {
    CacheConfig cfg;
    cfg.total_pages = 64;
    cfg.eviction = e;
    auto c = std::move(make_kv_cache(cfg)).value();
    run_request(*c, chars("aaaa"));
    for (int i = 0; i < 3; ++i) c->match_prefix(chars("aaaa"));  // shared by four requests
    run_request(*c, chars("bbbb"));
    EXPECT_EQ(c->evict(1), 4);
    auto paths = node_paths(c->snapshot());
    EXPECT_EQ(paths.count(chars("aaaa")), e == Eviction::gdsf ? 1u : 0u)
        << (e == Eviction::gdsf ? "gdsf" : "lru");
    EXPECT_EQ(paths.count(chars("bbbb")), e == Eviction::gdsf ? 0u : 1u)
        << (e == Eviction::gdsf ? "gdsf" : "lru");
    expect_ok(*c);
  }
}

// gdsf's aging: popularity counts from the clock of its time, so a leaf
// matched often long ago goes before one matched less often since.
TEST(RadixCache, GdsfAgesOldPopularityOut) {
  CacheConfig cfg;
  cfg.total_pages = 64;
  cfg.eviction = Eviction::gdsf;
  auto c = std::move(make_kv_cache(cfg)).value();
  run_request(*c, chars("aaaa"));
  for (int i = 0; i < 3; ++i) c->match_prefix(chars("aaaa"));  // priority 0 + 3
  run_request(*c, chars("bbbb"));
  for (int i = 0; i < 5; ++i) c->match_prefix(chars("bbbb"));  // priority 0 + 5
  EXPECT_EQ(c->evict(1), 4);
  EXPECT_FALSE(node_paths(c->snapshot()).count(chars("aaaa"))) << "the lowest priority first";
  run_request(*c, chars("cccc"));                              // the clock is 3 now
  for (int i = 0; i < 3; ++i) c->match_prefix(chars("cccc"));  // priority 3 + 3
  EXPECT_EQ(c->evict(1), 4);
  const auto paths = node_paths(c->snapshot());
  EXPECT_FALSE(paths.count(chars("bbbb"))) << "5 hits, but before the clock moved";
  EXPECT_TRUE(paths.count(chars("cccc")));
  expect_ok(*c);
}

TEST(RadixCache, ParentBecomesCandidateWhenItsLastChildGoes) {
  CacheConfig cfg;
  cfg.total_pages = 64;
  cfg.merge_after_evict = false;
  auto c = std::move(make_kv_cache(cfg)).value();
  run_request(*c, chars("xxab"));
  run_request(*c, chars("xxcd"));  // xx -> {ab, cd}
  run_request(*c, chars("zzzz"));
  EXPECT_EQ(c->evict(4), 4) << "ab then cd";
  auto paths = node_paths(c->snapshot());
  EXPECT_TRUE(paths.count(chars("xx"))) << "stopped once 4 tokens were freed";
  EXPECT_EQ(c->evict(2), 2) << "xx is a leaf now and older than zzzz";
  EXPECT_TRUE(node_paths(c->snapshot()).count(chars("zzzz")));
  expect_ok(*c);
}

TEST(RadixCache, LockedNodesAreNeverEvicted) {
  auto c = make_cache(CachePolicy::radix, 1, 16);
  Request a = run_request(*c, chars("aaaaaaaa"), /*keep_lock=*/true);
  run_request(*c, chars("bbbbbbbb"));
  EXPECT_EQ(c->evict(100), 8);
  EXPECT_TRUE(node_paths(c->snapshot()).count(chars("aaaaaaaa")));
  EXPECT_EQ(c->stats().protected_pages, 8);
  ASSERT_TRUE(c->unlock(a.insert.node).ok());
  EXPECT_EQ(c->stats().evictable_pages, 8);
  expect_ok(*c);
}

TEST(RadixCache, FullPoolWithEverythingLockedReturnsNoPages) {
  for (int ps : {1, 16}) {
    auto c = make_cache(CachePolicy::radix, ps, 4);
    std::vector<Token> key(size_t(4 * ps), 7);
    Request a = run_request(*c, key, /*keep_lock=*/true);
    ASSERT_TRUE(a.status.ok());
    std::vector<PageId> out;
    Status s = c->alloc_pages(1, out);
    EXPECT_EQ(s.code(), StatusCode::no_pages) << s.to_string();
    EXPECT_TRUE(out.empty());
    // And a request through the protocol fails cleanly too.
    Request b = run_request(*c, std::vector<Token>(size_t(2 * ps), 9));
    EXPECT_EQ(b.status.code(), StatusCode::no_pages);
    // Held pages count as protected too.
    ASSERT_TRUE(c->unlock(a.insert.node).ok());
    ASSERT_TRUE(c->alloc_pages(4, out).ok());
    EXPECT_EQ(c->alloc_pages(1, out).code(), StatusCode::no_pages);
    EXPECT_EQ(c->stats().held_pages, 4);
    expect_ok(*c);
    ASSERT_TRUE(c->free_pages(out).ok());
    expect_ok(*c);
  }
}

TEST(RadixCache, PinnedPrefixSurvivesUntilNothingElseIsLeft) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  Request sys = run_request(*c, chars("SYSTEM"));
  ASSERT_TRUE(c->pin(sys.insert.node).ok());
  for (const char* s : {"aaaa", "bbbb", "cccc"}) run_request(*c, chars(s));
  EXPECT_EQ(c->stats().pinned_pages, 6);
  EXPECT_EQ(c->evict(12), 12);
  EXPECT_TRUE(node_paths(c->snapshot()).count(chars("SYSTEM"))) << "older, but pinned";
  EXPECT_EQ(c->node_count(), 1);
  EXPECT_EQ(c->evict(1), 6) << "pinned goes when nothing else is left";
  EXPECT_EQ(c->node_count(), 0);
  expect_ok(*c);
}

TEST(RadixCache, UnpinMakesAPrefixOrdinaryAgain) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  Request sys = run_request(*c, chars("SYS"));
  ASSERT_TRUE(c->pin(sys.insert.node).ok());
  run_request(*c, chars("abc"));
  ASSERT_TRUE(c->unpin(sys.insert.node).ok());
  EXPECT_EQ(c->unpin(sys.insert.node).code(), StatusCode::invalid_argument);
  EXPECT_EQ(c->evict(1), 3);
  EXPECT_FALSE(node_paths(c->snapshot()).count(chars("SYS")));
  expect_ok(*c);
}

TEST(RadixCache, MergesParentWithItsOnlyChildAfterEviction) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("abcd"));
  run_request(*c, chars("abxy"));  // ab -> {cd, xy}; all touched by this request
  c->match_prefix(chars("abxy"));  // ab and xy share a tick, cd is older
  EXPECT_EQ(c->evict(1), 2);       // cd goes; ab is left with only xy, same tick
  CacheSnapshot s = c->snapshot();
  EXPECT_EQ(c->node_count(), 1) << "ab + xy merged back into abxy";
  EXPECT_EQ(c->stats().merges, 1u);
  EXPECT_TRUE(node_paths(s).count(chars("abxy")));
  expect_ok(*c);
}

TEST(RadixCache, NoMergeAcrossDifferentTicksOrLocks) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("abcd"));
  Request r = run_request(*c, chars("abxy"), /*keep_lock=*/true);
  c->match_prefix(chars("abcd"));  // ab touched with cd; xy older but locked
  c->match_prefix(chars("ab"));    // only ab is newer now
  ASSERT_TRUE(c->unlock(r.insert.node).ok());
  EXPECT_EQ(c->evict(1), 2);  // xy (oldest unlocked leaf) goes
  EXPECT_EQ(c->node_count(), 2) << "ab and cd have different ticks: no merge";
  expect_ok(*c);
}

TEST(RadixCache, ResetDropsEverythingButRefusesWhileLocked) {
  auto c = make_cache(CachePolicy::radix, 1, 32);
  Request a = run_request(*c, chars("abc"), true);
  run_request(*c, chars("xyz"));
  EXPECT_EQ(c->reset().code(), StatusCode::invalid_argument);
  ASSERT_TRUE(c->unlock(a.insert.node).ok());
  ASSERT_TRUE(c->reset().ok());
  EXPECT_EQ(c->node_count(), 0);
  EXPECT_EQ(c->free_page_count(), 32);
  EXPECT_EQ(c->lock(a.insert.node).code(), StatusCode::invalid_argument) << "stale handle";
  expect_ok(*c);
}

TEST(RadixCache, StatsCountHitsAndMeanMatchLength) {
  auto c = make_cache(CachePolicy::radix, 1, 64);
  run_request(*c, chars("abcdef"));  // miss: 0 of 6
  run_request(*c, chars("abcxyz"));  // hit 3 of 6
  CacheStats s = c->stats();
  EXPECT_EQ(s.prompt_tokens, 12u);
  EXPECT_EQ(s.hit_tokens, 3u);
  EXPECT_DOUBLE_EQ(s.hit_rate(), 0.25);
  EXPECT_DOUBLE_EQ(s.mean_match_tokens(), 1.5);
  EXPECT_EQ(s.inserts, 2u);
  EXPECT_EQ(s.inserted_tokens, 9u);
  EXPECT_EQ(s.free_pages + s.evictable_pages + s.protected_pages, s.total_pages);
}

TEST(RadixCache, ByteAccountingFollowsTheModelShape) {
  CacheConfig cfg;
  cfg.page_size = 16;
  cfg.total_pages = 10;
  cfg.shape = {22, 4, 64, 2};  // TinyLlama: 22 layers, 4 kv heads, head_dim 64, fp16
  auto c = std::move(make_kv_cache(cfg)).value();
  EXPECT_EQ(cfg.shape.bytes_per_token(), 22 * 4 * 64 * 2 * 2);
  EXPECT_EQ(c->stats().bytes_per_page, 22 * 4 * 64 * 2 * 2 * 16);
}

TEST(CacheFactory, RejectsBadConfigs) {
  CacheConfig cfg;
  cfg.total_pages = 0;
  EXPECT_EQ(make_kv_cache(cfg).status().code(), StatusCode::invalid_argument);
  cfg.total_pages = 8;
  cfg.page_size = 0;
  EXPECT_EQ(make_kv_cache(cfg).status().code(), StatusCode::invalid_argument);
  EXPECT_FALSE(parse_cache_policy("lru").ok());
  EXPECT_EQ(*parse_cache_policy("hash"), CachePolicy::hash);
}

}  // namespace
}  // namespace rc::test

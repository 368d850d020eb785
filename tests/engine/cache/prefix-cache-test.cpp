// The core protocol on its own (radixchat/cache.h, PrefixCache): match,
// lock, allocate, insert, evict and check, with nothing else in reach. The
// split interfaces hold exactly their own members, and every policy serves
// requests through a PrefixCache& alone.
#include <gtest/gtest.h>

#include <random>
#include <type_traits>

#include "cache-test-util.h"

namespace rc::test {
namespace {

// The core has the six verbs of the protocol and nothing of the others.
template <class C>
concept Core = requires(C& c, const C& cc, std::span<const Token> t, NodeHandle h,
                        std::vector<PageId>& out) {
  { c.match_prefix(t) } -> std::same_as<MatchResult>;
  { c.lock(h) } -> std::same_as<Status>;
  { c.unlock(h) } -> std::same_as<Status>;
  { c.alloc_pages(int64_t(1), out) } -> std::same_as<Status>;
  { c.free_pages(std::span<const PageId>()) } -> std::same_as<Status>;
  { c.insert(t, std::span<const PageId>()) } -> std::same_as<Result<InsertResult>>;
  { c.evict(int64_t(1)) } -> std::same_as<int64_t>;
  { cc.check_integrity() } -> std::same_as<Status>;
};
template <class C>
concept Observes = requires(C& c) {
  c.snapshot();
};
template <class C>
concept Upkeeps = requires(C& c, NodeHandle h) {
  c.pin(h);
};
template <class C>
concept ProbesTiers = requires(C& c, NodeHandle h) {
  c.note_promoted(h, int64_t(0));
};
template <class C>
concept Drafts = requires(const C& c, std::span<const Token> t) {
  c.peek_continuation(t, 1u);
};

static_assert(Core<PrefixCache>);
static_assert(!Observes<PrefixCache> && !Upkeeps<PrefixCache> && !ProbesTiers<PrefixCache> &&
              !Drafts<PrefixCache>);
static_assert(Observes<CacheView> && !Core<CacheView> && !Upkeeps<CacheView>);
static_assert(Upkeeps<CacheUpkeep> && !Core<CacheUpkeep> && !Observes<CacheUpkeep>);
static_assert(ProbesTiers<CacheTierHooks> && !Core<CacheTierHooks> && !Drafts<CacheTierHooks>);
static_assert(Drafts<CacheDraftSource> && !Core<CacheDraftSource> &&
              !ProbesTiers<CacheDraftSource>);
static_assert(std::is_base_of_v<PrefixCache, KvCache> && std::is_base_of_v<CacheView, KvCache> &&
              std::is_base_of_v<CacheUpkeep, KvCache> &&
              std::is_base_of_v<CacheTierHooks, KvCache> &&
              std::is_base_of_v<CacheDraftSource, KvCache>);

class CoreProtocol : public ::testing::TestWithParam<CachePolicy> {};

// Random requests over a small alphabet, some kept locked, through the
// core alone: every step keeps the invariants, and a locked prefix still
// matches whole after everything that came later.
TEST_P(CoreProtocol, ServesRequestsThroughTheCoreAlone) {
  const CachePolicy policy = GetParam();
  const int page_size = policy == CachePolicy::hash ? 2 : 1;
  auto owned = make_cache(policy, page_size, 64, /*events=*/false);
  PrefixCache& c = *owned;
  EXPECT_EQ(c.config().policy, policy);
  std::mt19937 rng(7);
  std::vector<std::pair<std::vector<Token>, NodeHandle>> held;
  int64_t hits = 0;
  for (int i = 0; i < 400; ++i) {
    std::vector<Token> key(4 + rng() % 12);
    for (Token& t : key) t = Token(rng() % 3);
    const bool keep = rng() % 4 == 0;
    Request r = run_request(c, key, keep);
    hits += r.match.tokens;
    if (r.status.ok() && keep) held.push_back({key, r.insert.node});
    if (held.size() > 3) {
      const auto& [k, node] = held.front();
      const int64_t aligned = int64_t(k.size()) / page_size * page_size;
      if (policy != CachePolicy::off) {
        EXPECT_EQ(c.match_prefix(k).tokens, aligned);
      }
      EXPECT_TRUE(c.unlock(node).ok());
      held.erase(held.begin());
    }
    if (i % 50 == 49) c.evict(8);
    Status s = c.check_integrity();
    ASSERT_TRUE(s.ok()) << s.to_string();
    ASSERT_LE(c.free_page_count(), 64);
  }
  EXPECT_EQ(hits > 0, policy != CachePolicy::off) << hits << " tokens matched";
}

INSTANTIATE_TEST_SUITE_P(Policies, CoreProtocol,
                         ::testing::Values(CachePolicy::radix, CachePolicy::hash, CachePolicy::off),
                         [](const auto& info) {
                           return std::string(cache_policy_name(info.param));
                         });

}  // namespace
}  // namespace rc::test

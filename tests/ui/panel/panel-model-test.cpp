// The panel's tree model against the real cache: start from a snapshot,
// apply the drained events, and the node set equals a fresh snapshot after
// every step of random workloads (radix, page sizes 1 and 16, evictions,
// merges, pins, resets). Also: seq gaps and queue overflow resync, pause and
// step, annotations (new, split flash, match path, ghosts), locate.
#include <gtest/gtest.h>

#include "panel/cache-panel-state.h"
#include "panel/tree-model.h"
#include "ui/panel/panel-workload.h"

namespace rc::ui::panel {
namespace {

using rc::test::make_panel_cache;
using rc::test::PanelWorkload;

std::vector<Token> chars(const std::string& s) { return {s.begin(), s.end()}; }

void expect_same(const TreeModel& m, const CacheSnapshot& s, int step) {
  const std::vector<CacheNodeInfo> got = m.infos();
  ASSERT_EQ(got.size(), s.nodes.size()) << "at step " << step;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], s.nodes[i]) << "node " << s.nodes[i].id << " differs at step " << step;
  }
}

void apply_all(TreeModel& m, KvCache& c, double now) {
  std::vector<CacheEvent> ev;
  ASSERT_FALSE(c.events().drain(ev)) << "queue overflowed";
  for (const CacheEvent& e : ev)
    ASSERT_NE(m.apply(e, now), ApplyResult::needs_resync) << "seq " << e.seq;
}

class ReplayTest : public ::testing::TestWithParam<std::tuple<int, int64_t, uint32_t>> {};

TEST_P(ReplayTest, EventsReproduceTheSnapshot) {
  const auto [page_size, pool, seed] = GetParam();
  auto cache = make_panel_cache(page_size, pool);
  PanelWorkload w(*cache, seed);
  for (int i = 0; i < 30; ++i) w.step();  // start from a non-empty tree
  TreeModel m;
  m.reset(cache->snapshot(), 0);
  uint64_t evictions = 0, splits = 0, merges = 0;
  for (int step = 0; step < 1500; ++step) {
    w.step();
    if (step % 3 == 0) w.draft();  // drafted decoding's events change no node
    apply_all(m, *cache, step * 0.01);
    if (step % 7 == 0 || step > 1490) expect_same(m, cache->snapshot(), step);
    if (::testing::Test::HasFatalFailure()) return;
  }
  expect_same(m, cache->snapshot(), -1);
  const CacheStats st = cache->stats();
  evictions = st.evictions;
  splits = st.splits;
  merges = st.merges;
  // The workload must have exercised what replay has to get right.
  EXPECT_GT(evictions, 20u);
  EXPECT_GT(splits, 20u);
  EXPECT_EQ(m.draft_counts().drafts, w.drafts.drafts);
  EXPECT_EQ(m.draft_counts().drafted_tokens, w.drafts.drafted_tokens);
  EXPECT_EQ(m.draft_counts().accepted_tokens, w.drafts.accepted_tokens);
  EXPECT_GT(m.draft_counts().tree_drafts, 50u);
  EXPECT_LT(m.draft_counts().tree_drafts, m.draft_counts().drafts);
  if (page_size == 1) {
    EXPECT_GT(merges, 0u);
  }
  ASSERT_TRUE(cache->check_integrity().ok());
}

INSTANTIATE_TEST_SUITE_P(Workloads, ReplayTest,
                         ::testing::Values(std::make_tuple(1, int64_t(160), 1u),
                                           std::make_tuple(1, int64_t(300), 2u),
                                           std::make_tuple(1, int64_t(96), 3u),
                                           std::make_tuple(16, int64_t(16 * 24), 4u),
                                           std::make_tuple(16, int64_t(16 * 40), 5u)));

TEST(TreeModel, GapNeedsResyncAndLeavesModelUnchanged) {
  auto cache = make_panel_cache(1, 256);
  TreeModel m;
  m.reset(cache->snapshot(), 0);
  PanelWorkload w(*cache, 9);
  for (int i = 0; i < 5; ++i) w.request(false);
  std::vector<CacheEvent> ev;
  cache->events().drain(ev);
  ASSERT_GT(ev.size(), 3u);
  ASSERT_EQ(m.apply(ev[0], 0), ApplyResult::applied);
  const auto before = m.infos();
  EXPECT_EQ(m.apply(ev[2], 0), ApplyResult::needs_resync);  // ev[1] skipped
  EXPECT_EQ(m.infos(), before);
  EXPECT_EQ(m.apply(ev[0], 0), ApplyResult::skipped);  // older than the model
  // Resync, and the rest applies (or is skipped as already reflected).
  m.reset(cache->snapshot(), 0);
  for (const CacheEvent& e : ev) EXPECT_NE(m.apply(e, 0), ApplyResult::needs_resync);
  expect_same(m, cache->snapshot(), 0);
}

TEST(TreeModel, UnknownNodeNeedsResync) {
  TreeModel m;
  CacheSnapshot empty;
  empty.nodes.push_back(CacheNodeInfo{});
  m.reset(empty, 0);
  CacheEvent e;
  e.seq = 0;
  e.kind = CacheEventKind::lock;
  e.node = 42;
  EXPECT_EQ(m.apply(e, 0), ApplyResult::needs_resync);
  EXPECT_EQ(m.next_seq(), 0u);
}

TEST(TreeModel, AnnotatesInsertSplitMatchAndEviction) {
  auto cache = make_panel_cache(1, 64);
  TreeModel m;
  m.reset(cache->snapshot(), 0);
  PanelWorkload w(*cache, 1);
  // Insert "system:hello", then match "system:bye" (splits at "system:").
  auto run = [&](const std::string& s) {
    auto key = chars(s);
    MatchResult mr = cache->match_prefix(key);
    std::vector<PageId> pages = mr.pages;
    ASSERT_TRUE(cache->alloc_pages(int64_t(key.size()) - mr.tokens, pages).ok());
    ASSERT_TRUE(cache->insert(key, pages).ok());
  };
  run("system:hello");
  apply_all(m, *cache, 1.0);
  ASSERT_EQ(m.size(), 2u);
  const NodeId first = m.root().children.at(0);
  EXPECT_EQ(m.find(first)->inserted_at, 1.0);
  EXPECT_EQ(m.last_insert_node(), first);

  run("system:bye");
  apply_all(m, *cache, 2.0);
  ASSERT_EQ(m.root().children.size(), 1u);
  const TreeNode* shared = m.find(m.root().children[0]);
  EXPECT_EQ(shared->tokens, chars("system:"));
  EXPECT_EQ(shared->children.size(), 2u);
  EXPECT_EQ(shared->flashed_at, 2.0);  // the split flashes
  EXPECT_EQ(m.find(first)->flashed_at, 2.0);
  EXPECT_EQ(m.find(first)->depth_tokens, 7);
  // The match of "system:bye" highlighted the shared node (and the root).
  EXPECT_EQ(shared->matched_at, 2.0);
  EXPECT_EQ(m.last_match_tokens(), 7);

  // locate: the full "system:hello" path, and a partial one.
  EXPECT_EQ(m.locate(chars("system:hello, world")), first);
  NodeId partial = kNoNode;
  EXPECT_EQ(m.locate(chars("system:hey"), &partial), shared->id);
  EXPECT_NE(partial, kNoNode);
  EXPECT_EQ(m.path_tokens(first), chars("system:hello"));

  // Fill the pool: LRU leaves go, each leaves a ghost.
  run("another long prompt that needs many pages in this tiny pool!!!");
  apply_all(m, *cache, 3.0);
  ASSERT_FALSE(m.ghosts().empty());
  EXPECT_EQ(m.ghosts().back().died_at, 3.0);
  expect_same(m, cache->snapshot(), 0);
  m.expire_ghosts(10.0, 3.5);
  EXPECT_TRUE(m.ghosts().empty());
}

// Tier events (hand-made, as an engine with tiers sends them): demote marks
// the leaf and its ghost sinks; promote marks the nodes the loaded tokens
// span; held_below comes from snapshots only, by node id.
TEST(TreeModel, DemotePromoteAndHeldBelowMarks) {
  CacheSnapshot s;
  s.nodes.push_back(CacheNodeInfo{});
  CacheNodeInfo a;
  a.id = 1;
  a.parent = kRootNode;
  a.tokens = chars("system prompt ");
  a.pages.assign(a.tokens.size(), 0);
  CacheNodeInfo b = a;
  b.id = 2;
  b.parent = 1;
  b.tokens = chars("question");
  s.nodes.push_back(a);
  s.nodes.push_back(b);
  s.held_below = {0, 14, 0};
  TreeModel m;
  m.reset(s, 0);
  EXPECT_EQ(m.find(1)->held_below, 14u);
  EXPECT_EQ(m.find(2)->held_below, 0u);

  auto ev = [&](uint64_t seq, CacheEventKind k, NodeId node, uint32_t tokens) {
    CacheEvent e;
    e.seq = seq;
    e.kind = k;
    e.node = node;
    e.parent = node == 2 ? 1 : kRootNode;
    e.token_count = tokens;
    return e;
  };
  EXPECT_EQ(m.apply(ev(0, CacheEventKind::demote, 99, 8), 1), ApplyResult::needs_resync);
  ASSERT_EQ(m.apply(ev(0, CacheEventKind::demote, 2, 8), 1), ApplyResult::applied);
  EXPECT_EQ(m.find(2)->held_below, 8u);
  EXPECT_EQ(m.find(2)->demoted_at, 1.0);
  ASSERT_EQ(m.apply(ev(1, CacheEventKind::evict, 2, 0), 1), ApplyResult::applied);
  ASSERT_EQ(m.ghosts().size(), 1u);
  EXPECT_EQ(m.ghosts()[0].node.demoted_at, 1.0) << "the ghost knows it sank";
  EXPECT_EQ(m.tier_counts().demotions, 1u);
  EXPECT_EQ(m.tier_counts().demoted_tokens, 8u);

  // 20 tokens loaded, ending at node 2 (re-inserted): they span node 1 too.
  CacheEvent ins = ev(2, CacheEventKind::insert, 2, 8);
  ins.tokens = chars("question");
  ins.pages.assign(8, 0);
  ASSERT_EQ(m.apply(ins, 2), ApplyResult::applied);
  ASSERT_EQ(m.apply(ev(3, CacheEventKind::promote, 2, 20), 2), ApplyResult::applied);
  EXPECT_EQ(m.find(2)->promoted_at, 2.0);
  EXPECT_EQ(m.find(1)->promoted_at, 2.0);
  EXPECT_EQ(m.tier_counts().promotions, 1u);
  EXPECT_EQ(m.tier_counts().promoted_tokens, 20u);

  // A later snapshot's marks, by id; a snapshot without tiers changes nothing.
  CacheSnapshot later = s;
  later.held_below = {0, 14, 8};
  const uint64_t v = m.version();
  EXPECT_TRUE(m.refresh_held_below(later));
  EXPECT_GT(m.version(), v);
  EXPECT_EQ(m.find(2)->held_below, 8u);
  EXPECT_FALSE(m.refresh_held_below(later));
  later.held_below.clear();
  EXPECT_FALSE(m.refresh_held_below(later));
  EXPECT_EQ(m.find(1)->held_below, 14u);
}

TEST(TreeModel, PagesByStateFollowLocks) {
  auto cache = make_panel_cache(1, 128);
  TreeModel m;
  m.reset(cache->snapshot(), 0);
  PanelWorkload w(*cache, 3);
  w.request(true);   // stays locked
  w.request(false);  // evictable
  apply_all(m, *cache, 0);
  const TreeModel::Pages p = m.pages_by_state();
  const CacheStats st = cache->stats();
  EXPECT_EQ(p.protected_pages, st.protected_pages - st.held_pages);
  EXPECT_EQ(p.evictable_pages, st.evictable_pages);
  EXPECT_EQ(p.cached_tokens, st.cached_tokens);
}

// The whole state over a bare cache: overflow and gaps resync, and the model
// still equals the snapshot; pause queues, Step applies one event at a time.
TEST(CachePanelState, OverflowResyncsToTheSnapshot) {
  auto cache = make_panel_cache(1, 200, /*event_capacity=*/32);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  PanelWorkload w(*cache, 11);
  const uint64_t resyncs0 = st.source.resyncs;
  for (int frame = 0; frame < 200; ++frame) {
    for (int i = 0; i < 1 + frame % 9; ++i) w.step();  // some frames overflow 32 events
    st.sync(frame / 60.0);
    expect_same(st.tree.model, cache->snapshot(), frame);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(st.source.resyncs, resyncs0);
  EXPECT_GT(st.log.total(), 100u);
}

TEST(CachePanelState, PauseQueuesAndStepAppliesOneEvent) {
  auto cache = make_panel_cache(1, 256);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  PanelWorkload w(*cache, 5);
  w.request(false);
  st.sync(0.1);
  const auto frozen = st.tree.model.infos();
  st.set_paused(true, 0.2);
  for (int i = 0; i < 10; ++i) w.request(false);
  st.sync(0.3);
  EXPECT_EQ(st.tree.model.infos(), frozen);  // nothing applied while paused
  const size_t queued = st.source.pending.size();
  ASSERT_GT(queued, 10u);
  const uint64_t seq0 = st.tree.model.next_seq();
  ASSERT_TRUE(st.step_one(0.4));
  EXPECT_EQ(st.source.pending.size(), queued - 1);
  EXPECT_EQ(st.tree.model.next_seq(), seq0 + 1);
  st.set_paused(false, 0.5);  // resume applies the rest
  EXPECT_TRUE(st.source.pending.empty());
  expect_same(st.tree.model, cache->snapshot(), 0);
}

// Hash blocks and the off policy emit the same kinds without the exact
// replay promise (a block can go before its children): the panel must stay
// sound, hanging orphans under the root, and equal the cache after a resync.
TEST(CachePanelState, HashAndOffPoliciesStaySound) {
  for (CachePolicy policy : {CachePolicy::hash, CachePolicy::off}) {
    CacheConfig cfg;
    cfg.policy = policy;
    cfg.page_size = policy == CachePolicy::hash ? 4 : 1;
    cfg.total_pages = 64;
    auto cache = std::move(make_kv_cache(cfg)).value();
    CachePanelState st;
    st.set_feed(make_kv_cache_feed(*cache), 0);
    PanelWorkload w(*cache, 17);
    for (int frame = 0; frame < 300; ++frame) {
      w.step();
      w.step();
      const double t = frame / 60.0;
      st.sync(t);
      const TreeLayout& L = st.tree.layout(t);
      if (st.tree.holding_for_ghosts(t)) continue;  // an eviction's ghost holds the old places
      if (policy == CachePolicy::off)               // only what is in flight is drawn
        ASSERT_LE(L.nodes.size(), st.tree.model.size());
      else
        ASSERT_EQ(L.nodes.size(), st.tree.model.size()) << "every node laid out, orphans included";
    }
    st.resync(10, "test");
    EXPECT_EQ(st.tree.model.infos(), cache->snapshot().nodes);
  }
}

TEST(CachePanelState, LocateSelectsTheDeepestCachedNode) {
  auto cache = make_panel_cache(1, 256);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  for (const char* s : {"sys: be nice. user: hi", "sys: be nice. user: bye"}) {
    auto key = chars(s);
    MatchResult mr = cache->match_prefix(key);
    std::vector<PageId> pages = mr.pages;
    ASSERT_TRUE(cache->alloc_pages(int64_t(key.size()) - mr.tokens, pages).ok());
    ASSERT_TRUE(cache->insert(key, pages).ok());
  }
  st.sync(0.1);
  st.locate(chars("sys: be nice. user: hi there"), 0.2);
  ASSERT_NE(st.tree.located, kNoNode);
  EXPECT_EQ(st.tree.model.path_tokens(st.tree.located), chars("sys: be nice. user: hi"));
  EXPECT_EQ(st.tree.selected, st.tree.located);
  // The located node stays laid out even with a tiny LOD budget.
  st.tree.lod.max_visible = 2;
  st.tree.lod_changed();
  EXPECT_NE(st.tree.layout(0.3).find(st.tree.located), nullptr);
}

}  // namespace
}  // namespace rc::ui::panel

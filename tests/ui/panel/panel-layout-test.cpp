// Tidy layout properties over random trees: no two boxes overlap, a parent
// is centred on its children, columns follow depth, gaps are respected; and
// the level of detail keeps large trees within budget without losing the
// nodes being looked at.
#include <gtest/gtest.h>

#include <random>

#include "panel/tree-layout.h"
#include "panel/tree-lod.h"
#include "ui/panel/panel-workload.h"

namespace rc::ui::panel {
namespace {

TidyInput random_tree(std::mt19937& rng, int n, bool varied_heights) {
  TidyInput in;
  in.children.resize(size_t(n));
  std::uniform_real_distribution<float> w(20, 200), h(10, 60);
  for (int i = 1; i < n; ++i) {
    // Mix of bushy and chain-like shapes: attach to a recent node or any.
    const int lo = rng() % 3 == 0 ? std::max(0, i - 3) : 0;
    const int parent = lo + int(rng() % uint32_t(i - lo));
    in.children[size_t(parent)].push_back(i);
  }
  for (int i = 0; i < n; ++i) {
    in.width.push_back(w(rng));
    in.height.push_back(varied_heights ? h(rng) : 30.0f);
  }
  return in;
}

void check_layout(const TidyInput& in, const std::vector<Box>& b, const TidyParams& p) {
  const size_t n = in.children.size();
  ASSERT_EQ(b.size(), n);
  // Columns: every box of a depth starts at that depth's x, deeper is right.
  std::vector<float> col_x;
  for (size_t i = 0; i < n; ++i) {
    if (size_t(b[i].depth) >= col_x.size()) col_x.resize(size_t(b[i].depth) + 1, -1);
    if (col_x[size_t(b[i].depth)] < 0) col_x[size_t(b[i].depth)] = b[i].x;
    ASSERT_FLOAT_EQ(b[i].x, col_x[size_t(b[i].depth)]);
    for (int c : in.children[i]) ASSERT_EQ(b[size_t(c)].depth, b[i].depth + 1);
  }
  float min_y = 1e30f;
  for (size_t i = 0; i < n; ++i) min_y = std::min(min_y, b[i].y);
  EXPECT_NEAR(min_y, 0.0f, 1e-3f);
  EXPECT_FLOAT_EQ(b[size_t(in.root)].x, 0.0f);
  // No overlaps: boxes sorted by column then y; neighbours keep the gap.
  // (Different columns never overlap: a column is as wide as its widest box.)
  for (size_t d = 0; d < col_x.size(); ++d) {
    std::vector<const Box*> col;
    for (const Box& x : b)
      if (size_t(x.depth) == d) col.push_back(&x);
    std::sort(col.begin(), col.end(), [](auto* a, auto* c) { return a->y < c->y; });
    for (size_t i = 1; i < col.size(); ++i)
      ASSERT_GE(col[i]->y - (col[i - 1]->y + col[i - 1]->h), p.sibling_gap - 1e-2f)
          << "column " << d << " boxes " << i - 1 << " and " << i << " overlap";
    if (d + 1 < col_x.size()) {
      float widest = 0;
      for (const Box* x : col) widest = std::max(widest, x->w);
      ASSERT_NEAR(col_x[d + 1] - col_x[d], widest + p.level_gap, 1e-3f);
    }
  }
  // A parent sits centred on its first and last child, children keep order.
  for (size_t i = 0; i < n; ++i) {
    const auto& c = in.children[i];
    if (c.empty()) continue;
    const Box& f = b[size_t(c.front())];
    const Box& l = b[size_t(c.back())];
    const float mid = 0.5f * ((f.y + f.h * 0.5f) + (l.y + l.h * 0.5f));
    EXPECT_NEAR(b[i].y + b[i].h * 0.5f, mid, 1e-2f * std::max(1.0f, std::fabs(mid)) + 1e-2f);
    for (size_t k = 1; k < c.size(); ++k) ASSERT_LT(b[size_t(c[k - 1])].y, b[size_t(c[k])].y);
  }
}

TEST(TidyLayout, RandomTreesHaveNoOverlaps) {
  std::mt19937 rng(7);
  TidyParams p;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + int(rng() % (trial < 250 ? 60u : 2000u));
    const TidyInput in = random_tree(rng, n, trial % 2 == 1);
    check_layout(in, tidy_layout(in, p), p);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "trial " << trial << " with " << n << " nodes";
      return;
    }
  }
}

TEST(TidyLayout, DeepChainDoesNotOverflowTheStack) {
  TidyInput in;
  const int n = 20000;
  in.children.resize(n);
  for (int i = 0; i + 1 < n; ++i) in.children[size_t(i)].push_back(i + 1);
  in.width.assign(n, 50);
  in.height.assign(n, 20);
  const auto b = tidy_layout(in, TidyParams{});
  EXPECT_EQ(b.back().depth, n - 1);
  EXPECT_FLOAT_EQ(b.back().y, b.front().y);  // a chain is a straight line
}

TEST(TidyLayout, SymmetricSubtreesGetSymmetricShapes) {
  // root with three children, the outer two with two leaves each.
  TidyInput in;
  in.children = {{1, 2, 3}, {4, 5}, {}, {6, 7}, {}, {}, {}, {}};
  in.width.assign(8, 40);
  in.height.assign(8, 20);
  TidyParams p;
  const auto b = tidy_layout(in, p);
  check_layout(in, b, p);
  // The middle child sits at the root's centre; outer subtrees mirror.
  EXPECT_NEAR(b[2].y, b[0].y, 1e-3f);
  EXPECT_NEAR(b[2].y - b[1].y, b[3].y - b[2].y, 1e-3f);
}

TEST(TreeLod, BigTreeStaysWithinBudgetAndKeepsWatchedNodes) {
  auto cache = rc::test::make_panel_cache(1, 1 << 20);
  rc::test::grow_tree(*cache, 3000, 21);
  TreeModel m;
  m.reset(cache->snapshot(), 0);
  ASSERT_GE(m.size(), 3000u);

  // The coldest leaf, which LOD would fold away, is kept when watched.
  NodeId coldest = kNoNode;
  uint64_t oldest = UINT64_MAX;
  for (const auto& [id, n] : m.nodes())
    if (id != kRootNode && n.children.empty() && n.last_access < oldest)
      oldest = n.last_access, coldest = id;

  LodOptions lod;
  lod.max_visible = 400;
  lod.max_children = 30;
  lod.keep = {coldest};
  NodeMetrics metrics;
  const TreeLayout L = layout_tree(m, lod, metrics);
  // Budget: folded boxes count once; "+N more" boxes add at most one per parent.
  size_t real = 0, aggregates = 0;
  int64_t hidden = 0;
  for (const LaidNode& ln : L.nodes) {
    if (ln.aggregate) {
      ++aggregates;
      hidden += ln.hidden;
    } else {
      ++real;
      if (ln.folded) hidden += ln.hidden;
    }
  }
  // A watched node's path is shown with the siblings along it.
  size_t path_children = 0;
  for (NodeId p = coldest; p != kRootNode; p = m.find(p)->parent)
    path_children += m.find(p)->children.size();
  EXPECT_LE(real, lod.max_visible + path_children + m.root().children.size());
  EXPECT_EQ(int64_t(real) + hidden, int64_t(m.size()));  // every node shown or counted
  ASSERT_NE(L.find(coldest), nullptr);
  for (NodeId p = coldest; p != kRootNode; p = m.find(p)->parent) EXPECT_NE(L.find(p), nullptr);

  // The laid-out boxes never overlap either.
  std::vector<LaidNode> v = L.nodes;
  std::sort(v.begin(), v.end(), [](const LaidNode& a, const LaidNode& b) {
    return a.depth != b.depth ? a.depth < b.depth : a.y < b.y;
  });
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].depth == v[i - 1].depth) {
      ASSERT_GE(v[i].y, v[i - 1].y + v[i - 1].h);
    }
  }

  // Off: everything is laid out.
  lod.enabled = false;
  EXPECT_EQ(layout_tree(m, lod, metrics).nodes.size(), m.size());
}

// Any two boxes of a laid-out model tree are disjoint, in both orientations.
void expect_disjoint(const TreeLayout& L) {
  std::vector<const LaidNode*> v;
  for (const LaidNode& n : L.nodes) v.push_back(&n);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->x < b->x; });
  for (size_t i = 0; i < v.size(); ++i) {
    for (size_t j = i + 1; j < v.size() && v[j]->x < v[i]->x + v[i]->w; ++j) {
      const bool apart_y = v[j]->y >= v[i]->y + v[i]->h || v[i]->y >= v[j]->y + v[j]->h;
      ASSERT_TRUE(apart_y) << "boxes " << v[i]->id << " and " << v[j]->id << " overlap";
    }
  }
}

TEST(TreeLod, BothOrientationsHaveNoOverlaps) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto cache = rc::test::make_panel_cache(1, 1 << 18);
    rc::test::grow_tree(*cache, 400 * seed, seed);
    TreeModel m;
    m.reset(cache->snapshot(), 0);
    for (bool vertical : {false, true}) {
      LodOptions lod;
      lod.vertical = vertical;
      lod.max_visible = 300;
      const TreeLayout L = layout_tree(m, lod, NodeMetrics{});
      EXPECT_EQ(L.vertical, vertical);
      expect_disjoint(L);
      if (::testing::Test::HasFatalFailure()) return;
      // Vertical: a child is below its parent; horizontal: to its right.
      for (const LaidNode& n : L.nodes) {
        if (n.parent < 0) continue;
        const LaidNode& p = L.nodes[size_t(n.parent)];
        if (vertical)
          EXPECT_GE(n.y, p.y + p.h);
        else
          EXPECT_GE(n.x, p.x + p.w);
      }
    }
  }
}

TEST(TreeLod, ManualFoldAndUnfold) {
  auto cache = rc::test::make_panel_cache(1, 1 << 16);
  rc::test::grow_tree(*cache, 60, 3);
  TreeModel m;
  m.reset(cache->snapshot(), 0);
  NodeId inner = kNoNode;
  for (const auto& [id, n] : m.nodes())
    if (id != kRootNode && n.children.size() >= 2) inner = id;
  ASSERT_NE(inner, kNoNode);
  LodOptions lod;
  lod.collapsed.insert(inner);
  const TreeLayout L = layout_tree(m, lod, NodeMetrics{});
  ASSERT_NE(L.find(inner), nullptr);
  EXPECT_TRUE(L.find(inner)->folded);
  for (NodeId c : m.find(inner)->children) EXPECT_EQ(L.find(c), nullptr);
  lod.collapsed.clear();
  lod.expanded.insert(inner);
  const TreeLayout L2 = layout_tree(m, lod, NodeMetrics{});
  EXPECT_FALSE(L2.find(inner)->folded);
}

TEST(NodeMetrics, WidthGrowsWithTokensAndIsCapped) {
  NodeMetrics m;
  EXPECT_LT(m.width_for(1), m.width_for(10));
  EXPECT_LT(m.width_for(10), m.width_for(300));
  EXPECT_LE(m.width_for(1000000), m.max_width);
}

}  // namespace
}  // namespace rc::ui::panel

// Draw-list checks of rendered panel frames, without a window or GL: an
// ImGui context with a built font atlas, NewFrame, the panel's draw(),
// Render, then the vertices in GetDrawData(). Every node box is one
// AddRectFilled, i.e. one white-textured quad of the node's height, so the
// boxes on screen can be counted in the draw data and compared with the
// layout and camera computed independently here.
#include <gtest/gtest.h>
#include <imgui.h>

#include <cmath>
#include <utility>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "ui/panel/headless-imgui.h"
#include "ui/panel/panel-workload.h"

namespace rc::ui::panel {
namespace {

std::vector<Token> chars(const std::string& s) { return {s.begin(), s.end()}; }

class DrawTest : public ::testing::Test {
 protected:
  void frame(CachePanelState& st) {
    now_ += 1.0 / 60;
    ImGui::NewFrame();
    st.sync(now_);
    st.draw(now_);
    ImGui::Render();
  }
  // A still picture: no glide, camera jumps to its target.
  static void still(CachePanelState& st) {
    st.tree.view.animate = false;
    st.tree.view.smooth_camera = false;
  }

  // PrimRect quads (index pattern a,a+1,a+2,a,a+2,a+3 over an axis-aligned
  // rectangle, white-pixel UVs, opaque) of height `h` inside the canvas.
  static int node_quads(const CachePanelState& st, float h) {
    const ImDrawData* dd = ImGui::GetDrawData();
    const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
    const ImVec2 c0 = st.tree.view.canvas_min(), c1 = st.tree.view.canvas_max();
    int n = 0;
    for (int l = 0; l < dd->CmdListsCount; ++l) {
      const ImDrawList* dl = dd->CmdLists[l];
      for (const ImDrawCmd& cmd : dl->CmdBuffer) {
        if (cmd.UserCallback) continue;
        const ImDrawIdx* idx = dl->IdxBuffer.Data + cmd.IdxOffset;
        const ImDrawVert* vtx = dl->VtxBuffer.Data + cmd.VtxOffset;
        for (unsigned i = 0; i + 6 <= cmd.ElemCount; i += 3) {
          const ImDrawIdx* q = idx + i;
          const unsigned a = q[0];
          if (q[1] != a + 1 || q[2] != a + 2 || q[3] != a || q[4] != a + 2 || q[5] != a + 3)
            continue;
          const ImDrawVert* v = vtx + a;
          bool ok = v[0].pos.y == v[1].pos.y && v[1].pos.x == v[2].pos.x &&
                    v[2].pos.y == v[3].pos.y && v[3].pos.x == v[0].pos.x;
          for (int k = 0; k < 4 && ok; ++k)
            ok = v[k].uv.x == white.x && v[k].uv.y == white.y &&
                 (v[k].col >> IM_COL32_A_SHIFT) == 255 && v[k].col == v[0].col;
          if (!ok || std::fabs((v[2].pos.y - v[0].pos.y) - h) > 0.01f) continue;
          // Only boxes that meet the canvas (vertices are not clipped; the
          // scissor rectangle is).
          if (v[2].pos.x < c0.x || v[0].pos.x > c1.x || v[2].pos.y < c0.y || v[0].pos.y > c1.y)
            continue;
          ++n;
          i += 3;
        }
      }
    }
    return n;
  }

  // Boxes of real nodes whose screen rectangle meets the canvas, from the
  // layout and camera alone.
  static int expected_boxes(CachePanelState& st) {
    const TreeLayout& L = st.tree.layout(0);
    const Camera& c = st.tree.view.cam;
    const ImVec2 c0 = st.tree.view.canvas_min(), c1 = st.tree.view.canvas_max();
    int n = 0;
    for (const LaidNode& ln : L.nodes) {
      if (ln.aggregate) continue;
      const float x0 = c0.x + (ln.x - c.x) * c.zoom, y0 = c0.y + (ln.y - c.y) * c.zoom;
      const float x1 = x0 + ln.w * c.zoom, y1 = y0 + ln.h * c.zoom;
      if (x0 <= c1.x && x1 >= c0.x && y0 <= c1.y && y1 >= c0.y) ++n;
    }
    return n;
  }

  static int vertices_of_colour(ImU32 col) {
    const ImDrawData* dd = ImGui::GetDrawData();
    int n = 0;
    for (int l = 0; l < dd->CmdListsCount; ++l)
      for (const ImDrawVert& v : dd->CmdLists[l]->VtxBuffer) n += v.col == col;
    return n;
  }

  static void run_request(KvCache& c, const std::string& s) {
    auto key = chars(s);
    MatchResult mr = c.match_prefix(key);
    std::vector<PageId> pages = mr.pages;
    ASSERT_TRUE(c.alloc_pages(int64_t(key.size()) - mr.tokens, pages).ok());
    ASSERT_TRUE(c.insert(key, pages).ok());
  }

  HeadlessImGui imgui_{ImVec2(1100, 800), 15.0f};
  double now_ = 0;
};

TEST_F(DrawTest, EveryNodeOfASmallTreeIsOneBox) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  for (const char* s :
       {"<sys> Be brief. <user> What is a KV cache?", "<sys> Be brief. <user> Why prefixes?",
        "<sys> Be brief. <user> What is a KV cache? <bot> Memory.", "<sys> Be kind.",
        "Translate: cat => chat"})
    run_request(*cache, s);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  still(st);
  frame(st);
  frame(st);
  const size_t n = st.tree.model.size();
  ASSERT_GE(n, 7u);
  const float h = st.tree.metrics.height * st.tree.view.cam.zoom;
  EXPECT_GT(st.tree.view.cam.zoom, 0.5f);  // fitted, readable
  EXPECT_EQ(st.tree.view.stats().nodes_drawn, int(n));
  EXPECT_EQ(expected_boxes(st), int(n));
  EXPECT_EQ(node_quads(st, h), int(n));
  EXPECT_EQ(st.tree.view.stats().edges_drawn, int(n) - 1);
  EXPECT_EQ(st.tree.view.stats().labels_drawn, int(n));
  EXPECT_EQ(st.tree.view.stats().culled, 0);
}

// A bare cache posing as one with a disk tier below it: every node's first
// `held` tokens are "held below" in its snapshots.
class TieredFeed final : public CacheFeed {
 public:
  TieredFeed(KvCache& c, uint32_t held) : c_(c), inner_(make_kv_cache_feed(c)), held_(held) {}
  // As an engine's: queued events stay queued (older ones are skipped).
  CacheSnapshot snapshot() override {
    CacheSnapshot s = c_.snapshot();
    ++snapshots;
    for (const CacheNodeInfo& n : s.nodes)
      s.held_below.push_back(n.id == kRootNode ? 0 : std::min<uint32_t>(held_, n.tokens.size()));
    return s;
  }
  std::vector<CacheEvent> drain(bool* o) override { return inner_->drain(o); }
  CacheStats cache_stats() override { return inner_->cache_stats(); }
  bool tier_stats(TierStats* out) override {
    out->enabled = true;
    out->block_tokens = 64;
    out->tiers.resize(1);
    out->tiers[0].name = "disk";
    out->tiers[0].state = "up";
    out->tiers[0].bytes = 4096;
    out->loads = 2;
    out->recomputes = 1;
    out->loaded_tokens = 128;
    return true;
  }
  std::string detokenize(const std::vector<Token>& t) override { return inner_->detokenize(t); }
  std::string cache_setting() override { return inner_->cache_setting(); }
  int64_t pool_tokens() override { return inner_->pool_tokens(); }
  std::string describe() override { return "a tiered test cache"; }
  int snapshots = 0;

 private:
  KvCache& c_;
  std::unique_ptr<CacheFeed> inner_;
  uint32_t held_;
};

TEST_F(DrawTest, NodesTheTiersHoldAreMarkedAndRefreshedFromSnapshots) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  for (const char* s : {"<sys> Be brief. <user> What is a KV cache?",
                        "<sys> Be brief. <user> Why prefixes?", "Translate: cat => chat"})
    run_request(*cache, s);
  CachePanelState st;
  auto feed = std::make_unique<TieredFeed>(*cache, 4);
  TieredFeed* tf = feed.get();
  st.set_feed(std::move(feed), 0);
  still(st);
  frame(st);
  frame(st);
  ASSERT_TRUE(st.source.has_tiers);
  EXPECT_EQ(st.sink_tier(), "disk");
  const int nodes = int(st.tree.model.size()) - 1;
  ASSERT_GE(nodes, 3);
  EXPECT_EQ(st.tree.view.stats().tier_marks_drawn, nodes);
  EXPECT_NE(st.tier_line().find("2 loads (128 tok) vs 1 recompute"), std::string::npos)
      << st.tier_line();
  // Snapshots for held_below: one at the resync and one refresh, then no
  // more than one a second however many frames are drawn.
  const int taken = tf->snapshots;
  for (int i = 0; i < 30; ++i) frame(st);  // half a second
  EXPECT_LE(tf->snapshots, taken + 1);
  for (int i = 0; i < 90; ++i) frame(st);  // a second and a half more
  EXPECT_GE(tf->snapshots, taken + 1);
  EXPECT_LE(tf->snapshots, taken + 3);
  // A new node is marked once a snapshot says the tiers hold it (its
  // insert event alone does not).
  const uint64_t resyncs = st.source.resyncs;
  run_request(*cache, "Another prompt entirely, long enough");
  frame(st);
  EXPECT_EQ(st.tree.view.stats().tier_marks_drawn, nodes);
  for (int i = 0; i < 70; ++i) frame(st);
  EXPECT_EQ(st.tree.view.stats().tier_marks_drawn, nodes + 1);
  EXPECT_EQ(st.source.resyncs, resyncs) << "refreshing the marks is not a resync";
  // Paused: no refresh (the model shows an older tree than the snapshot).
  st.set_paused(true, 0);
  const int paused_at = tf->snapshots;
  for (int i = 0; i < 130; ++i) frame(st);
  EXPECT_EQ(tf->snapshots, paused_at);
}

// A tiered engine's events, scripted: two leaves, one demoted before its
// eviction (it sinks), one evicted plainly (it fades in red), then a
// promotion; the snapshot says what the tiers hold.
class ScriptedTierFeed final : public CacheFeed {
 public:
  ScriptedTierFeed() {
    snap.page_size = 1;
    snap.total_pages = 1024;
    snap.nodes.push_back(CacheNodeInfo{});
    for (NodeId id : {1u, 2u, 3u}) {
      CacheNodeInfo n;
      n.id = id;
      n.parent = id == 1 ? kRootNode : 1;
      n.tokens = chars(id == 1 ? "<sys> shared prompt " : id == 2 ? "first leaf" : "second leaf");
      n.pages.assign(n.tokens.size(), PageId(id));
      snap.nodes.push_back(n);
    }
    snap.held_below = {0, 20, 10, 0};
  }
  CacheSnapshot snapshot() override { return snap; }
  std::vector<CacheEvent> drain(bool* o) override {
    *o = false;
    return std::exchange(queued, {});
  }
  CacheStats cache_stats() override { return {}; }
  bool tier_stats(TierStats* out) override {
    out->enabled = true;
    out->tiers.resize(1);
    out->tiers[0].name = "disk";
    out->tiers[0].state = "up";
    return true;
  }
  std::string detokenize(const std::vector<Token>& t) override { return {t.begin(), t.end()}; }
  std::string cache_setting() override { return "radix"; }
  int64_t pool_tokens() override { return 1024; }
  std::string describe() override { return "scripted tiers"; }
  void push(CacheEventKind k, NodeId node, uint32_t tokens) {
    CacheEvent e;
    e.seq = snap.next_seq++;
    e.kind = k;
    e.node = node;
    e.parent = 1;
    e.token_count = tokens;
    queued.push_back(e);
  }
  CacheSnapshot snap;
  std::vector<CacheEvent> queued;
};

TEST_F(DrawTest, ADemotedLeafSinksAndAPlainEvictionFades) {
  CachePanelState st;
  auto feed = std::make_unique<ScriptedTierFeed>();
  ScriptedTierFeed* f = feed.get();
  st.set_feed(std::move(feed), 0);
  still(st);
  frame(st);
  frame(st);
  EXPECT_EQ(st.tree.view.stats().tier_marks_drawn, 2);  // the shared node and the first leaf
  f->push(CacheEventKind::demote, 2, 10);
  f->push(CacheEventKind::evict, 2, 0);
  f->push(CacheEventKind::evict, 3, 0);
  frame(st);
  frame(st);
  EXPECT_EQ(st.tree.view.stats().ghosts_drawn, 2);
  EXPECT_EQ(st.tree.view.stats().sunk_ghosts_drawn, 1);
  EXPECT_EQ(st.tree.model.tier_counts().demotions, 1u);
  EXPECT_NE(st.tier_line().find("1 demoted"), std::string::npos) << st.tier_line();
}

TEST_F(DrawTest, ZoomedInBoxesOffScreenAreCulled) {
  auto cache = rc::test::make_panel_cache(1, 1 << 18);
  rc::test::grow_tree(*cache, 300, 4);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  st.tree.lod.enabled = false;
  st.tree.lod_changed();
  still(st);
  frame(st);
  st.tree.view.follow = false;
  const TreeLayout& L = st.tree.layout(now_);
  ASSERT_EQ(L.nodes.size(), st.tree.model.size());
  st.tree.view.cam = Camera{L.width * 0.3f, L.height * 0.4f, 1.5f};
  frame(st);
  const int expected = expected_boxes(st);
  ASSERT_GT(expected, 3);
  ASSERT_LT(expected, int(L.nodes.size()));
  EXPECT_EQ(st.tree.view.stats().nodes_drawn, expected);
  EXPECT_EQ(st.tree.view.stats().culled, int(L.nodes.size()) - expected);
  EXPECT_EQ(node_quads(st, st.tree.metrics.height * 1.5f), expected);
}

TEST_F(DrawTest, LargeTreeIsFoldedToTheBudget) {
  auto cache = rc::test::make_panel_cache(1, 1 << 20);
  rc::test::grow_tree(*cache, 5000, 8);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  st.tree.lod.max_visible = 600;
  st.tree.lod_changed();
  still(st);
  frame(st);
  frame(st);
  const TreeLayout& L = st.tree.layout(now_);
  EXPECT_LT(L.nodes.size(), 900u);
  const TreeViewStats& s = st.tree.view.stats();
  EXPECT_GT(s.folded_drawn, 0);
  EXPECT_EQ(s.nodes_drawn, expected_boxes(st));
  EXPECT_EQ(node_quads(st, st.tree.metrics.height * st.tree.view.cam.zoom), s.nodes_drawn);
}

TEST_F(DrawTest, MatchInsertSplitAndEvictionAreMarked) {
  auto cache = rc::test::make_panel_cache(1, 64);
  run_request(*cache, "<sys> Be brief. <user> hello");
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  still(st);
  frame(st);
  // A second chat with the same system prompt: split + new suffix.
  run_request(*cache, "<sys> Be brief. <user> bye");
  frame(st);
  EXPECT_GT(vertices_of_colour(Palette::matched), 0);   // gold path
  EXPECT_GT(vertices_of_colour(Palette::inserted), 0);  // green "new"
  EXPECT_GT(st.tree.model.find(st.tree.model.last_insert_node())->inserted_at, 0);
  // Fill the pool: the LRU leaf is evicted and fades out where it was.
  frame(st);
  run_request(*cache, "a different prompt that needs most of the pool's pages");
  frame(st);
  EXPECT_GE(st.tree.view.stats().ghosts_drawn, 1);
  bool logged = false;
  for (const LogEntry& e : st.log.entries())
    logged |= e.kind == CacheEventKind::evict && e.seq != UINT64_MAX;
  EXPECT_TRUE(logged);
}

TEST_F(DrawTest, HoverShowsATooltipAndClickSelects) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  run_request(*cache, "<sys> Be brief. <user> hello there");
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  still(st);
  frame(st);
  frame(st);
  const NodeId leaf = st.tree.model.root().children.at(0);
  float x, y, w, h;
  ASSERT_TRUE(st.tree.view.world_box(leaf, st.tree.layout(now_), &x, &y, &w, &h));
  const ImVec2 centre = st.tree.view.to_screen(x + w / 2, y + h / 2);
  ImGuiIO& io = ImGui::GetIO();
  const int lists_before = ImGui::GetDrawData()->CmdListsCount;
  io.MousePos = centre;
  frame(st);
  frame(st);
  EXPECT_GT(ImGui::GetDrawData()->CmdListsCount, lists_before);  // the tooltip window
  io.MouseDown[0] = true;
  frame(st);
  io.MouseDown[0] = false;
  frame(st);
  EXPECT_EQ(st.tree.selected, leaf);
  // Wheel zooms around the cursor: the node under it stays under it.
  const float z0 = st.tree.view.cam.zoom;
  io.MouseWheel = 2;
  frame(st);
  EXPECT_GT(st.tree.view.cam.zoom, z0);
  EXPECT_FALSE(st.tree.view.follow);
  const ImVec2 after = st.tree.view.to_screen(x + w / 2, y + h / 2);
  EXPECT_NEAR(after.x, centre.x, 0.5f);
  EXPECT_NEAR(after.y, centre.y, 0.5f);
}

// A long node's label keeps its start and its end, the middle elided, and
// fits its box; a short one is whole.
TEST_F(DrawTest, LongLabelsKeepStartAndEnd) {
  ImGui::NewFrame();
  ImFont* font = ImGui::GetFont();
  const std::string text = "You are a helpful assistant who answers briefly. " +
                           std::string(400, 'x') + " The end of the prompt.";
  const std::string fitted = panel::fit_text_middle(font, 15, text, 200);
  ImGui::EndFrame();
  EXPECT_LE(font->CalcTextSizeA(15, FLT_MAX, 0, fitted.c_str()).x, 200.0f);
  EXPECT_EQ(fitted.rfind("You are", 0), 0u) << fitted;
  EXPECT_NE(fitted.find("\xE2\x80\xA6"), std::string::npos) << fitted;
  EXPECT_EQ(fitted.substr(fitted.size() - 7), "prompt.") << fitted;
  EXPECT_EQ(panel::fit_text_middle(font, 15, "short", 200), "short");
  // What the tree measures: a few hundred characters of each end.
  const std::string ends = panel::line_ends(text, 40);
  EXPECT_EQ(ends.rfind("You are a helpful", 0), 0u);
  EXPECT_EQ(ends.substr(ends.size() - 7), "prompt.");
  EXPECT_LT(ends.size(), 90u);
  EXPECT_EQ(panel::line_ends("a\nb", 40), "a \xE2\x86\xB5 b");
}

TEST_F(DrawTest, WithoutASourceThePanelStillDraws) {
  CachePanelState st;
  still(st);
  frame(st);
  frame(st);
  EXPECT_EQ(st.tree.view.stats().nodes_drawn, 1);  // the root alone
  EXPECT_GT(ImGui::GetDrawData()->TotalVtxCount, 100);
}

}  // namespace
}  // namespace rc::ui::panel

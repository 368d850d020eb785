// The panel at the sizes people use it: every control inside the
// window at the narrowest panel beside a 1024x700 window and at a projector
// text scale, tooltips inside the display, the legend and caption never
// over the newest node, recentring on resize, eviction ghosts held over the
// old layout, `off` drawing only what is in flight, plots that keep their
// points across a policy switch, and the exact token-range and plural text.
// No window or GL: an ImGui context renders frames, and the fit is read
// from ImGui's window and item geometry (panel-fit.h), not from pixels.
#include <gtest/gtest.h>
#include <imgui.h>

#include <cmath>
#include <string>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/stats-plot.h"
#include "ui/panel/headless-imgui.h"
#include "ui/panel/panel-workload.h"

namespace rc::ui::panel {
namespace {

std::vector<Token> chars(const std::string& s) { return {s.begin(), s.end()}; }

class FitTest : public ::testing::Test {
 protected:
  void frame(CachePanelState& st, double dt = 1.0 / 60) {
    now_ += dt;
    ImGui::GetIO().DeltaTime = float(dt);
    ImGui::NewFrame();
    st.sync(now_);
    st.draw(now_);
    ImGui::Render();
  }
  void frames(CachePanelState& st, int n) {
    for (int i = 0; i < n; ++i) frame(st);
  }
  static void still(CachePanelState& st) {
    st.tree.view.animate = false;
    st.tree.view.smooth_camera = false;
  }
  // Follows `c` without animation at `size` and draws a few frames.
  void watch(CachePanelState& st, KvCache& c, ImVec2 size) {
    st.set_feed(make_kv_cache_feed(c), now_);
    still(st);
    ImGui::GetIO().DisplaySize = size;
    frames(st, 3);
  }
  // Match, lock, allocate, insert; the lock is kept when `hold` (a request
  // in flight), else released.
  static void request(KvCache& c, const std::string& s, bool hold = false) {
    const std::vector<Token> key = chars(s);
    MatchResult m = c.match_prefix(key);
    std::vector<PageId> pages = m.pages;
    ASSERT_TRUE(c.alloc_pages(int64_t(key.size()) - m.tokens, pages).ok());
    Result<InsertResult> r = c.insert(key, pages);
    ASSERT_TRUE(r.ok());
    if (hold) {
      ASSERT_TRUE(c.lock(r.value().node).ok());
    }
  }
  static void chats(KvCache& c) {
    for (const char* s :
         {"<sys> You are a helpful assistant. <user> What is a KV cache and why keep it?",
          "<sys> You are a helpful assistant. <user> Why share prefixes between requests?",
          "<sys> You are a helpful assistant. <user> What is a KV cache and why keep it? "
          "<bot> Memory of past keys and values. <user> How big is it?",
          "<sys> Be kind.", "Translate: cat => chat", "Translate: dog => chien"})
      request(c, s);
  }

  HeadlessImGui imgui_{ImVec2(320, 600), panel::FrameState::kBaseFontPx};
  double now_ = 0;
};

TEST(LabelText, TokenRangesAreOneBasedAndInclusive) {
  EXPECT_EQ(token_range(1, 34), "tokens 2-35");  // 34 tokens after one
  EXPECT_EQ(token_range(0, 34), "tokens 1-34");
  EXPECT_EQ(token_range(0, 1), "token 1");
  EXPECT_EQ(token_range(41, 1), "token 42");
  EXPECT_EQ(token_range(999, 2001), "tokens 1,000-3,000");
  EXPECT_EQ(token_range(5, 0), "no tokens");
}

TEST(LabelText, PluralsAgreeWithTheCount) {
  EXPECT_EQ(plural(0, "node"), "0 nodes");
  EXPECT_EQ(plural(1, "node"), "1 node");
  EXPECT_EQ(plural(2, "node"), "2 nodes");
  EXPECT_EQ(plural(1234, "token"), "1,234 tokens");
  EXPECT_EQ(plural(1, "more branch", "more branches"), "1 more branch");
  EXPECT_EQ(plural(3, "more branch", "more branches"), "3 more branches");
}

TEST(StatsPlot, NiceCeilings) {
  EXPECT_EQ(nice_ceiling(0), 1.0f);
  EXPECT_EQ(nice_ceiling(0.7f), 1.0f);
  EXPECT_EQ(nice_ceiling(1.2f), 2.0f);
  EXPECT_EQ(nice_ceiling(3), 5.0f);
  EXPECT_EQ(nice_ceiling(37), 50.0f);
  EXPECT_EQ(nice_ceiling(120), 200.0f);
  EXPECT_EQ(nice_ceiling(500), 500.0f);
}

TEST(StatsHistory, PointsSurviveASourceChangeWithAMarker) {
  StatsHistory h;
  RequestTotals r;
  CacheStats cs;
  h.observe(&r, cs, 0);  // primes
  for (int i = 1; i <= 3; ++i) {
    r.finished = uint64_t(i);
    r.prompt_tokens = uint64_t(100 * i);
    r.cached_tokens = uint64_t(50 * i);
    h.observe(&r, cs, double(i));
  }
  ASSERT_EQ(h.points(), 3u);
  EXPECT_FLOAT_EQ(h.hit_rate().back(), 0.5f);
  // A new engine (policy off): its counters restart at zero.
  h.restart("off, 4096 tok", 3.5);
  RequestTotals r2;
  h.observe(&r2, cs, 4);  // primes again
  r2.finished = 1;
  r2.prompt_tokens = 100;
  h.observe(&r2, cs, 5);
  ASSERT_EQ(h.points(), 4u);
  EXPECT_FLOAT_EQ(h.hit_rate().back(), 0.0f);
  ASSERT_EQ(h.times().size(), 4u);
  EXPECT_DOUBLE_EQ(h.times().back(), 5.0);
  ASSERT_EQ(h.markers().size(), 1u);
  EXPECT_EQ(h.markers()[0].label, "off, 4096 tok");
  EXPECT_DOUBLE_EQ(h.markers()[0].at, 3.5);
}

// Every tab at the narrowest panel (the GL host's 320 px minimum) and a
// wide one, short and tall, at 100% and a projector's 175%: nothing ends
// outside its window and no window outside the display.
TEST_F(FitTest, EveryTabFitsNarrowAndWideAtAnyTextScale) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  chats(*cache);
  CachePanelState st;
  watch(st, *cache, ImGui::GetIO().DisplaySize);
  st.tree.select(st.tree.model.last_insert_node());
  const char* tabs[] = {"Node", "Plots", "Events", "Demos", "Cache"};
  // 320x480 and 320x560: the panel in a 1024x700 window, menus and bars
  // taken away (the GL host's minimum is 320x320).
  for (const ImVec2 size :
       {ImVec2(320, 480), ImVec2(320, 560), ImVec2(380, 600), ImVec2(560, 800)}) {
    for (const float scale : {1.0f, 1.75f}) {
      if (size.y < 500 && scale > 1) continue;  // no room for a projector's text
      ImGui::GetIO().DisplaySize = size;
      st.set_text_scale(scale);
      for (const char* tab : tabs) {
        st.frame.select_tab = tab;
        frames(st, 3);
        ASSERT_EQ(st.frame.current_tab, tab);
        const PanelFit& fit = st.frame.last_fit;
        EXPECT_TRUE(fit.fits()) << tab << " at " << size.x << "x" << size.y << ", text " << scale
                                << ": " << fit.overflow;
        EXPECT_GE(fit.windows, 2);  // the panel and its tab area at least
        EXPECT_LE(fit.items_max.x, size.x);
        EXPECT_LE(fit.windows_max.x, size.x);
        EXPECT_LE(fit.windows_max.y, size.y);
      }
    }
  }
}

// Ctrl + and Ctrl - step the text scale (ImGui key indices are the Qt key
// codes, imgui-input.h); Ctrl 0 resets; the tree's boxes grow with it.
TEST_F(FitTest, CtrlPlusAndMinusScaleTheText) {
  CachePanelState st;
  still(st);
  frames(st, 2);
  const float h0 = st.tree.metrics.height;
  ImGuiIO& io = ImGui::GetIO();
  auto press = [&](int key) {
    io.KeyCtrl = true;
    io.KeysDown[key] = true;
    frame(st);
    io.KeysDown[key] = false;
    io.KeyCtrl = false;
    frames(st, 2);
  };
  press('=');
  EXPECT_FLOAT_EQ(st.frame.text_scale, panel::FrameState::kTextScaleStep);
  EXPECT_FLOAT_EQ(st.tree.metrics.height, h0 * panel::FrameState::kTextScaleStep);
  EXPECT_FLOAT_EQ(io.FontGlobalScale, st.frame.text_scale);  // no GL host: ImGui scales the atlas
  press('+');
  EXPECT_GT(st.frame.text_scale, panel::FrameState::kTextScaleStep);
  press('-');
  press('-');
  press('-');
  EXPECT_LT(st.frame.text_scale, 1.0f);
  press('0');
  EXPECT_FLOAT_EQ(st.frame.text_scale, 1.0f);
  EXPECT_FLOAT_EQ(st.tree.metrics.height, h0);
  for (int i = 0; i < 20; ++i) press('=');
  EXPECT_FLOAT_EQ(st.frame.text_scale, panel::FrameState::kMaxTextScale);
}

// The fit measure is not vacuous: an item wider than the panel is caught.
TEST_F(FitTest, AnItemPastTheEdgeIsReported) {
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
  ImGui::Begin("##probe", nullptr, ImGuiWindowFlags_NoDecoration);
  ImGui::Button("ok");
  ImGui::Button("a button far wider than a three hundred and twenty pixel panel can hold");
  ImGui::End();
  const PanelFit fit = measure_panel_fit();
  ImGui::Render();
  EXPECT_FALSE(fit.fits());
  EXPECT_NE(fit.overflow.find("##probe"), std::string::npos) << fit.overflow;
  EXPECT_GT(fit.items_max.x, 320);
}

TEST_F(FitTest, TooltipsStayInsideTheDisplay) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  chats(*cache);
  CachePanelState st;
  watch(st, *cache, ImGui::GetIO().DisplaySize);
  // Hover each laid-out node near the right edge: the tooltip (wide text,
  // up to 900 characters) must be placed and wrapped inside the display.
  int hovered = 0;
  for (const LaidNode& ln : st.tree.layout(now_).nodes) {
    if (ln.id == kNoNode) continue;
    float x, y, w, h;
    ASSERT_TRUE(st.tree.view.world_box(ln.id, st.tree.layout(now_), &x, &y, &w, &h));
    const ImVec2 p = st.tree.view.to_screen(x + w - 2, y + h / 2);
    if (p.x < st.tree.view.canvas_min().x || p.x > st.tree.view.canvas_max().x ||
        p.y < st.tree.view.tree_area_top() || p.y > st.tree.view.tree_area_bottom())
      continue;
    ImGui::GetIO().MousePos = p;
    frames(st, 3);  // a tooltip's first frame only measures it
    if (st.frame.last_fit.tooltips == 0) continue;
    ++hovered;
    EXPECT_TRUE(st.frame.last_fit.fits())
        << "node #" << ln.id << ": " << st.frame.last_fit.overflow;
  }
  EXPECT_GE(hovered, 3);
}

// Follow keeps the newest node in view, and in view means in the tree's
// area: not under the legend strip, not under the caption.
TEST_F(FitTest, NewestNodeIsNeverUnderTheLegendOrCaption) {
  auto cache = rc::test::make_panel_cache(1, 1 << 16);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  still(st);
  ImGui::GetIO().DisplaySize = ImVec2(320, 560);
  st.set_paused(false, now_);
  for (int i = 0; i < 40; ++i) {
    request(*cache, "<sys> Shared system prompt. <user> question number " + std::to_string(i) +
                        " with some words");
    frames(st, 2);
    const NodeId newest = st.tree.model.last_insert_node();
    ASSERT_NE(newest, kNoNode);
    float x, y, w, h;
    ASSERT_TRUE(st.tree.view.world_box(newest, st.tree.layout(now_), &x, &y, &w, &h));
    const ImVec2 p0 = st.tree.view.to_screen(x, y), p1 = st.tree.view.to_screen(x + w, y + h);
    EXPECT_GE(p0.y, st.tree.view.tree_area_top() - 0.5f) << "request " << i;
    EXPECT_LE(p1.y, st.tree.view.tree_area_bottom() + 0.5f) << "request " << i;
    EXPECT_GE(p0.x, st.tree.view.canvas_min().x - 0.5f) << "request " << i;
    EXPECT_LE(p1.x, st.tree.view.canvas_max().x + 0.5f) << "request " << i;
  }
}

// Left to right in a narrow canvas, a chain just wider than the view at
// the readable zoom: Follow keeps the root at the left edge and shows the
// start of the newest node, rather than cutting the root off to show the
// node's end (at 1024x700 a two-node tree lost its root).
TEST_F(FitTest, FollowKeepsTheRootBesideTheStartOfAWideNode) {
  auto cache = rc::test::make_panel_cache(1, 1 << 16);
  CachePanelState st;
  st.tree.orientation = 1;
  watch(st, *cache, ImVec2(300, 520));
  std::string prompt = "<sys>";
  for (int i = 0; i < 40; ++i) prompt += " A system prompt long enough for the widest box.";
  request(*cache, prompt);
  frames(st, 3);
  const TreeView& v = st.tree.view;
  const TreeLayout& L = st.tree.layout(now_);
  ASSERT_FALSE(L.vertical);
  const NodeId newest = st.tree.model.last_insert_node();
  float x, y, w, h;
  ASSERT_TRUE(v.world_box(newest, L, &x, &y, &w, &h));
  EXPECT_EQ(v.cam.zoom, kReadableZoom);
  const ImVec2 root = v.to_screen(0, 0), start = v.to_screen(x, y), end = v.to_screen(x + w, y);
  ASSERT_GT(end.x, v.canvas_max().x) << "root and node both fit whole: nothing to choose";
  EXPECT_GE(root.x, v.canvas_min().x - 0.5f) << "Follow cut the root off";
  EXPECT_LE(start.x + 40, v.canvas_max().x) << "the newest node's start is out of view";
}

TEST_F(FitTest, ResizeKeepsTheCentreOrRefits) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  chats(*cache);
  CachePanelState st;
  watch(st, *cache, ImVec2(560, 700));
  // Follow off: the world point in the middle of the canvas stays there
  // (left to right at both sizes: a change of direction refits).
  st.tree.orientation = 1;
  st.tree.view.follow = false;
  st.tree.view.cam.x += 30;  // as after a pan
  frame(st);
  auto middle = [&] {
    const ImVec2 c0 = st.tree.view.canvas_min(), c1 = st.tree.view.canvas_max();
    return ImVec2((c0.x + c1.x) / 2, (c0.y + c1.y) / 2);
  };
  const ImVec2 m0 = middle();
  const Camera& c = st.tree.view.cam;
  const ImVec2 world(c.x + (m0.x - st.tree.view.canvas_min().x) / c.zoom,
                     c.y + (m0.y - st.tree.view.canvas_min().y) / c.zoom);
  ImGui::GetIO().DisplaySize = ImVec2(380, 620);
  frames(st, 2);
  const ImVec2 m1 = middle(), at = st.tree.view.to_screen(world.x, world.y);
  EXPECT_NEAR(at.x, m1.x, 1.0f);
  EXPECT_NEAR(at.y, m1.y, 1.0f);
  // Follow on: the whole tree is refitted to the new shape.
  st.tree.view.follow = true;
  frame(st);
  ImGui::GetIO().DisplaySize = ImVec2(900, 760);
  frames(st, 3);
  const TreeLayout& L = st.tree.layout(now_);
  const ImVec2 a = st.tree.view.to_screen(0, 0), b = st.tree.view.to_screen(L.width, L.height);
  const float left = a.x - st.tree.view.canvas_min().x, right = st.tree.view.canvas_max().x - b.x;
  EXPECT_NEAR(left, right, 2.0f);  // centred across
  EXPECT_GE(a.y, st.tree.view.tree_area_top() - 0.5f);
  EXPECT_LE(b.y, st.tree.view.tree_area_bottom() + 0.5f);
}

TEST_F(FitTest, EvictionGhostIsShownBeforeTheReflow) {
  auto cache = rc::test::make_panel_cache(1, 96);
  request(*cache, "<sys> Be brief. <user> hello");
  request(*cache, "<sys> Be brief. <user> bye now");
  CachePanelState st;
  watch(st, *cache, ImVec2(560, 700));
  const uint64_t layouts = st.tree.layouts_computed;
  // Needs most of the pool: the LRU leaves are evicted.
  request(*cache, "an unrelated prompt that needs most of the pages of the small pool here");
  frame(st);
  ASSERT_GE(st.tree.view.stats().ghosts_drawn, 1);
  EXPECT_EQ(st.tree.layouts_computed, layouts);  // the old places, under the ghost
  frame(st, 0.3);
  EXPECT_EQ(st.tree.layouts_computed, layouts);
  EXPECT_GE(st.tree.view.stats().ghosts_drawn, 1);
  frame(st, 0.8);  // past the hold: the tree reflows
  EXPECT_GT(st.tree.layouts_computed, layouts);
}

TEST_F(FitTest, OffDrawsOnlyWhatIsInFlight) {
  CacheConfig cfg;
  cfg.policy = CachePolicy::off;
  cfg.page_size = 1;
  cfg.total_pages = 4096;
  cfg.shape = KvShape{4, 2, 16, 2};
  auto cache = std::move(make_kv_cache(cfg)).value();
  chats(*cache);
  CachePanelState st;
  watch(st, *cache, ImVec2(560, 700));
  ASSERT_TRUE(st.policy_off());
  ASSERT_GT(st.tree.model.size(), 1u)
      << "off keeps finished sequences until their pages are needed";
  EXPECT_EQ(st.tree.view.stats().nodes_drawn, 1);  // the root alone: nothing is reused
  EXPECT_EQ(st.tree.layout(now_).nodes.size(), 1u);
  // A request in flight is drawn, and only its path.
  request(*cache, "<sys> Be kind. <user> a request still running", /*hold=*/true);
  frames(st, 3);
  const TreeLayout& L = st.tree.layout(now_);
  ASSERT_GT(L.nodes.size(), 1u);
  for (const LaidNode& ln : L.nodes) {
    if (ln.id == kRootNode) continue;
    // Every drawn node is on the path of a locked node.
    bool live = false;
    std::vector<NodeId> stack{ln.id};
    while (!stack.empty() && !live) {
      const TreeNode* n = st.tree.model.find(stack.back());
      stack.pop_back();
      if (!n) continue;
      live = n->lock_ref > 0;
      for (NodeId c : n->children) stack.push_back(c);
    }
    EXPECT_TRUE(live) << "node #" << ln.id << " is drawn but nothing in flight uses it";
  }
  EXPECT_LT(L.nodes.size(), st.tree.model.size());
  // A radix cache with the same requests lays them all out and draws all
  // that are on screen (Fit stops at a readable zoom: the rest is a pan
  // away).
  auto radix = rc::test::make_panel_cache(1, 4096);
  chats(*radix);
  CachePanelState st2;
  st2.set_feed(make_kv_cache_feed(*radix), now_);
  still(st2);
  frames(st2, 3);
  EXPECT_FALSE(st2.policy_off());
  EXPECT_EQ(st2.tree.layout(now_).nodes.size(), st2.tree.model.size());
  EXPECT_EQ(st2.tree.view.stats().nodes_drawn + st2.tree.view.stats().culled,
            int(st2.tree.model.size()));
}

}  // namespace
}  // namespace rc::ui::panel

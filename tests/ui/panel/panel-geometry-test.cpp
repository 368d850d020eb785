// The panel's geometry and text as pure functions, and the remote view's
// empty and orphan cases without a window: Fit's camera never below a
// readable zoom (the root shown, the rest a pan away), tooltips kept inside
// the display, the recording timeline's labels off its plot lines,
// template tokens drawn as marks, a remote cache's blocks of unknown
// prefix grouped under one node, and an empty remote cache's message
// below its root's box.
#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <string>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/recording-timeline.h"
#include "panel/remote-feed.h"
#include "panel/tree-view.h"
#include "radixchat/cache-text.h"
#include "ui/panel/headless-imgui.h"

namespace rc::ui::panel {
namespace {

bool intersects(ImVec2 a0, ImVec2 a1, ImVec2 b0, ImVec2 b1) {
  return a0.x < b1.x && b0.x < a1.x && a0.y < b1.y && b0.y < a1.y;
}

TEST(FitCamera, ASmallTreeIsCentredWhole) {
  const FitArea area{ImVec2(400, 300), 20, 20, 28, 40};
  const Camera c = fit_camera(ImVec2(200, 100), ImVec2(10, 50), area);
  EXPECT_FLOAT_EQ(c.zoom, 1.25f);
  // The tree's middle is the free area's middle.
  const float mid_x = (200 * 0.5f - c.x) * c.zoom, mid_y = (100 * 0.5f - c.y) * c.zoom;
  EXPECT_NEAR(mid_x, 20 + (400 - 40) * 0.5f, 0.01f);
  EXPECT_NEAR(mid_y, 28 + (300 - 68) * 0.5f, 0.01f);
}

TEST(FitCamera, ABigTreeStopsAtAReadableZoomAndShowsItsRoot) {
  const FitArea area{ImVec2(400, 300), 20, 20, 28, 40};
  // 20 times wider than the canvas: fitting it would need zoom 0.09.
  const ImVec2 tree(8000, 2000), root(40, 1000);
  const Camera c = fit_camera(tree, root, area);
  EXPECT_FLOAT_EQ(c.zoom, kReadableZoom);
  EXPECT_GE(c.zoom, 0.6f) << "labels are drawn from here";
  // The root's box is in the free area; the far end is not (a pan away).
  const float root_x = (root.x - c.x) * c.zoom, root_y = (root.y - c.y) * c.zoom;
  EXPECT_GE(root_x, 20.0f);
  EXPECT_LE(root_x, 380.0f);
  EXPECT_GE(root_y, 28.0f);
  EXPECT_LE(root_y, 260.0f);
  EXPECT_GT((tree.x - c.x) * c.zoom, 400.0f);
  // The view starts at the tree's left edge, not before it.
  EXPECT_NEAR(c.x, -20 / c.zoom, 0.01f);
  // Never below the floor, however large the tree.
  EXPECT_FLOAT_EQ(fit_camera(ImVec2(1e6f, 1e6f), ImVec2(0, 0), area).zoom, kReadableZoom);
}

TEST(Tooltip, KeptInsideTheDisplay) {
  const ImVec2 display(800, 600), pad(3, 3);
  // Past the right and bottom edges: moved in.
  ImVec2 p = keep_inside(ImVec2(700, 550), ImVec2(300, 200), display, pad);
  EXPECT_FLOAT_EQ(p.x, 800 - 3 - 300);
  EXPECT_FLOAT_EQ(p.y, 600 - 3 - 200);
  // Inside: unchanged.
  p = keep_inside(ImVec2(100, 50), ImVec2(300, 200), display, pad);
  EXPECT_FLOAT_EQ(p.x, 100);
  EXPECT_FLOAT_EQ(p.y, 50);
  // Larger than the display: at the top-left of the room; and no tooltip
  // may be larger than that room.
  p = keep_inside(ImVec2(400, 300), ImVec2(900, 700), display, pad);
  EXPECT_FLOAT_EQ(p.x, 3);
  EXPECT_FLOAT_EQ(p.y, 3);
  const ImVec2 most = tooltip_max_size(display, pad);
  EXPECT_FLOAT_EQ(most.x, 794);
  EXPECT_FLOAT_EQ(most.y, 594);
}

TEST(Tooltip, QuotesAreCutToTheirLines) {
  EXPECT_EQ(clip_lines("short", 10, 2), "short");
  EXPECT_EQ(clip_lines("abcdefghij", 4, 2), "abcdefgh\xE2\x80\xA6");
  EXPECT_EQ(clip_lines("a\nb\nc\nd", 10, 3), "a\nb\nc\xE2\x80\xA6");
  // Counted in code points: a multi-byte character is never split.
  EXPECT_EQ(clip_lines("\xC3\xA9\xC3\xA9\xC3\xA9", 2, 1), "\xC3\xA9\xC3\xA9\xE2\x80\xA6");
}

TEST(Timeline, LabelsLieOffThePlotLines) {
  for (const float h : {52.0f, 75.0f, 105.0f}) {
    const ImVec2 p0(10, 20), size(300, h);
    const TimelineRows r = timeline_rows(p0, size, 15);
    EXPECT_FALSE(intersects(r.label0, r.label1, r.hit0, r.hit1)) << h;
    EXPECT_FALSE(intersects(r.label0, r.label1, r.mem0, r.mem1)) << h;
    EXPECT_FALSE(intersects(r.hit0, r.hit1, r.mem0, r.mem1)) << h;
    EXPECT_FALSE(intersects(r.mem0, r.mem1, r.strip0, r.strip1)) << h;
    EXPECT_GE(r.label1.y - r.label0.y, 15.0f) << "a whole line of text";
    EXPECT_GT(r.hit1.y - r.hit0.y, 5.0f);
  }
  const TimelineRows r = timeline_rows(ImVec2(0, 0), ImVec2(300, 105), 15);
  EXPECT_LE(r.strip1.y, 105.5f) << "the rows fit the box they are given";
}

TEST(Timeline, AKvEventsRecordingSaysWhatItKnows) {
  EXPECT_EQ(timeline_cached_label(6, 4096, 100), "cached 6 of 4,096 tokens");
  // No pool recorded (KV events): no "of 0", no pool made up from the peak.
  EXPECT_EQ(timeline_cached_label(6, 0, 10), "cached 6 tokens (at most 10)");
  EXPECT_EQ(timeline_cached_label(1, 0, 1), "cached 1 token (at most 1)");
}

TEST(ControlTokens, DrawnAsMarks) {
  EXPECT_EQ(readable_control_tokens("<s><|system|>\nBe brief.<|end|>\n<|assistant|>\n"),
            "BOS\xE2\x96\xB8system\nBe brief.\xE2\x8F\x8E end\n\xE2\x96\xB8"
            "assistant\n");
  EXPECT_EQ(readable_control_tokens("<|im_start|>user\nHi<|im_end|>"),
            "\xE2\x96\xB8user\nHi\xE2\x8F\x8E end");
  EXPECT_EQ(readable_control_tokens("<|start_header_id|>user<|end_header_id|>"),
            "\xE2\x96\xB8user");
  // Text that only looks a little like a marker stays as it is.
  EXPECT_EQ(readable_control_tokens("a < b and x<|y z|> </div>"), "a < b and x<|y z|> </div>");
}

// A BlockTree the test fills: the remote feed's source.
class FakeBlocks final : public RemoteBlockSource {
 public:
  kv_events::BlockTree tree_;
  void poll() override {}
  const kv_events::BlockTree& tree() const override { return tree_; }
  std::string describe() const override { return "a test's KV events"; }
  std::string status() const override { return "attached"; }
};

kv_events::Event stored(std::vector<std::string> hashes, std::optional<std::string> parent,
                        std::vector<int64_t> tokens) {
  kv_events::Event e;
  e.kind = kv_events::EventKind::stored;
  e.block_hashes = std::move(hashes);
  e.parent = std::move(parent);
  e.token_ids = std::move(tokens);
  e.block_size = 2;
  return e;
}

TEST(RemoteFeed, BlocksOfUnknownPrefixHangUnderOneNode) {
  auto blocks = std::make_unique<FakeBlocks>();
  kv_events::Batch b;
  b.events.push_back(stored({"a", "b"}, std::nullopt, {1, 2, 3, 4}));  // a true root chain
  b.events.push_back(stored({"x"}, std::string("never-seen"), {7, 8}));
  b.events.push_back(stored({"y"}, std::string("also-unseen"), {9, 9}));
  blocks->tree_.apply(b);
  auto feed = make_remote_feed(std::move(blocks), nullptr);
  const CacheSnapshot s = feed->snapshot();
  auto find = [&](Token first) -> const CacheNodeInfo* {
    for (const CacheNodeInfo& n : s.nodes)
      if (!n.tokens.empty() && n.tokens.front() == first) return &n;
    return nullptr;
  };
  const CacheNodeInfo* unknown = find(kUnknownPrefixToken);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->parent, kRootNode);
  EXPECT_EQ(feed->detokenize(unknown->tokens), "unknown prefix (stored before you attached)");
  ASSERT_NE(find(1), nullptr);
  EXPECT_EQ(find(1)->parent, kRootNode) << "a block with no parent starts at the root";
  ASSERT_NE(find(7), nullptr);
  ASSERT_NE(find(9), nullptr);
  EXPECT_EQ(find(7)->parent, unknown->id);
  EXPECT_EQ(find(9)->parent, unknown->id);
  int unknown_nodes = 0;
  for (const CacheNodeInfo& n : s.nodes)
    unknown_nodes += !n.tokens.empty() && n.tokens.front() == kUnknownPrefixToken;
  EXPECT_EQ(unknown_nodes, 1);
}

TEST(RemoteFeed, AnEmptyCachesMessageIsBelowItsRoot) {
  HeadlessImGui imgui(ImVec2(380, 640), FrameState::kBaseFontPx);
  CachePanelState st;
  st.set_feed(make_remote_feed(std::make_unique<FakeBlocks>(), nullptr), 0);
  st.tree.view.animate = false;
  st.tree.view.smooth_camera = false;
  double now = 0;
  for (int i = 0; i < 4; ++i) {
    now += 1.0 / 60;
    ImGui::NewFrame();
    st.sync(now);
    st.draw(now);
    ImGui::Render();
  }
  const TreeViewStats& v = st.tree.view.stats();
  ASSERT_GT(v.empty_message_max.y, v.empty_message_min.y) << "no empty-state message";
  float x, y, w, h;
  ASSERT_TRUE(st.tree.view.world_box(kRootNode, st.tree.layout(now), &x, &y, &w, &h));
  const ImVec2 r0 = st.tree.view.to_screen(x, y), r1 = st.tree.view.to_screen(x + w, y + h);
  EXPECT_FALSE(intersects(r0, r1, v.empty_message_min, v.empty_message_max))
      << "root " << r0.y << "-" << r1.y << ", message " << v.empty_message_min.y << "-"
      << v.empty_message_max.y;
  EXPECT_LE(v.empty_message_max.x, st.tree.view.canvas_max().x + 0.5f);
  EXPECT_LE(v.empty_message_max.y, st.tree.view.canvas_max().y + 0.5f);
}

}  // namespace
}  // namespace rc::ui::panel

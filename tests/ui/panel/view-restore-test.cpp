// The user's own tree keeps its view (layout direction, tabs' share,
// camera, folds) across a lesson, an attached remote cache and an opened
// recording: each is entered from a view the test sets by hand, and after
// each the same view is back. Without a window: an Engine on the bundled
// model caches two prompts that branch, the panel draws headless frames.
#include <gtest/gtest.h>
#include <imgui.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "panel/cache-panel-state.h"
#include "radixchat/engine.h"
#include "recording-source.h"
#include "recording/recorder.h"
#include "test-paths.h"
#include "ui/panel/headless-imgui.h"
#include "ui/panel/headless-panel.h"

namespace rc::ui {
namespace {

// A remote cache with nothing in it: what the panel shows while attached.
class EmptyRemoteFeed : public panel::CacheFeed {
 public:
  CacheSnapshot snapshot() override {
    CacheSnapshot s;
    s.nodes.push_back(CacheNodeInfo{});
    return s;
  }
  std::vector<CacheEvent> drain(bool* overflowed) override {
    if (overflowed) *overflowed = false;
    return {};
  }
  CacheStats cache_stats() override { return {}; }
  std::string detokenize(const std::vector<Token>&) override { return ""; }
  std::string cache_setting() override { return "radix"; }
  int64_t pool_tokens() override { return 0; }
  std::string describe() override { return "an empty remote cache"; }
  bool remote() const override { return true; }
};

class ViewRestore : public panel::PanelEngineTest {
 protected:
  void SetUp() override {
    PanelEngineTest::SetUp();
    if (stopped()) return;
    for (const char* q : {"Which planets have rings?", "How far away is the Moon?"}) {
      auto t = engine_->render_chat({{"system", "Answer in plain words."}, {"user", q}});
      ASSERT_TRUE(t.ok());
      ASSERT_TRUE(engine_->last_logits(t.value()).ok());
    }
    st_.tree.view.animate = false;
    st_.tree.view.smooth_camera = false;
    st_.set_feed(panel::make_engine_feed(*engine_), now_);
    frames(3);
    ASSERT_GT(st_.tree.model.size(), 3u) << "a shared prefix and two branches";
  }

  // A view nobody would get by default: left to right, a short tab area,
  // the first branch folded, the camera moved by hand.
  void set_own_view() {
    st_.tree.orientation = 1;
    st_.frame.bottom_frac = 0.3f;
    NodeId fold = kNoNode;
    for (NodeId id : st_.tree.model.find(kRootNode)->children) fold = id;
    ASSERT_NE(fold, kNoNode);
    st_.tree.toggle_fold(fold);
    frames(2);
    st_.tree.view.set_camera({-40.0f, -25.0f, 0.9f});
    st_.tree.view.follow = false;
    frames(2);
    cam_ = st_.tree.view.cam;
    collapsed_ = st_.tree.lod.collapsed;
    ASSERT_FALSE(collapsed_.empty());
  }

  void expect_own_view(const std::string& after) {
    SCOPED_TRACE(after);
    frames(3);
    EXPECT_FALSE(st_.user_tree_parked());
    EXPECT_EQ(st_.tree.orientation, 1);
    EXPECT_FLOAT_EQ(st_.frame.bottom_frac, 0.3f);
    EXPECT_EQ(st_.tree.lod.collapsed, collapsed_);
    EXPECT_FALSE(st_.tree.view.follow);
    EXPECT_FLOAT_EQ(st_.tree.view.cam.zoom, cam_.zoom);
    EXPECT_FLOAT_EQ(st_.tree.view.cam.x, cam_.x);
    EXPECT_FLOAT_EQ(st_.tree.view.cam.y, cam_.y);
    EXPECT_FALSE(st_.tree.lod.vertical);
  }

  panel::Camera cam_;
  std::unordered_set<NodeId> collapsed_;
};

TEST_F(ViewRestore, AfterAnAttachedRemoteCache) {
  set_own_view();
  st_.set_feed(std::make_unique<EmptyRemoteFeed>(), now_);
  frames(3);
  ASSERT_TRUE(st_.remote_shown());
  EXPECT_TRUE(st_.user_tree_parked());
  EXPECT_TRUE(st_.tree.lod.collapsed.empty()) << "this tree's folds mean nothing in another";
  st_.set_feed(panel::make_engine_feed(*engine_), now_);  // detached
  expect_own_view("detach");
}

TEST_F(ViewRestore, AfterALesson) {
  set_own_view();
  st_.lesson.demo.by_hand = true;
  ASSERT_TRUE(st_.start_lesson(0, now_));
  // The lesson's engine loads on a thread of its own: wait for it (up to
  // 60 s on a loaded machine), a frame at a time.
  for (int i = 0; i < 6000 && !st_.lesson_shown(); ++i) {
    frames(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(st_.lesson_shown()) << st_.lesson.error;
  frames(3);
  EXPECT_TRUE(st_.user_tree_parked());
  EXPECT_TRUE(st_.tree.lod.collapsed.empty());
  st_.end_lesson(now_, "back");
  expect_own_view("lesson");
}

TEST_F(ViewRestore, AfterARecording) {
  const std::string path = rc::test::temp_path("rc-view", "view.rcrec");
  {
    recording::RecorderOptions opt;
    opt.source = "test";
    auto rec = recording::Recorder::create(path, opt);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    (*rec)->snapshot(engine_->cache_snapshot());
    ASSERT_TRUE((*rec)->close().ok());
  }
  set_own_view();
  st_.replay.opener = gui::make_recording_opener();
  st_.replay.install = [this](std::unique_ptr<panel::CacheFeed> feed) {
    st_.set_feed(feed ? std::move(feed) : panel::make_engine_feed(*engine_), now_);
  };
  ASSERT_EQ(st_.replay.open(path), "");
  frames(3);
  ASSERT_TRUE(st_.replay_shown());
  EXPECT_TRUE(st_.user_tree_parked());
  st_.replay.close();
  expect_own_view("recording");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rc::ui

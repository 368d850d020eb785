// Marks and counters belong to the tree they were made in. The user's
// chat locates a message and reports a context cut on the user's own
// tree; a lesson's tree (which caches the very same prompt) shows neither,
// the lesson's drafts stay out of the user's stats after "Back to my
// cache", and the user's marks are back on the user's tree. A restarted
// engine that re-caches the same prompt (a re-warmed system prompt) starts
// without the old tree's marks. Without a window: an Engine on the bundled
// model, headless frames.
#include <gtest/gtest.h>
#include <imgui.h>

#include <chrono>
#include <memory>
#include <thread>

#include "panel/cache-panel-state.h"
#include "radixchat/engine.h"
#include "ui/panel/headless-panel.h"

namespace rc::ui {
namespace {

using panel::drafts_scenario;

class TreeMarks : public panel::PanelEngineTest {
 protected:
  void SetUp() override {
    PanelEngineTest::SetUp();
    if (stopped()) return;
    // The user's chat asks what the drafts lesson's first step asks: the
    // lesson's tree holds the same prompt, where a leaked mark would land.
    const panel::DemoScenario& s = panel::demo_scenarios()[drafts_scenario()];
    auto t = engine_->render_chat(s.steps[0].messages);
    ASSERT_TRUE(t.ok());
    prompt_ = t.value();
    ASSERT_TRUE(engine_->last_logits(prompt_).ok());
    st_.tree.view.animate = false;
    st_.tree.view.smooth_camera = false;
    st_.set_feed(panel::make_engine_feed(*engine_), now_);
    frames(3);
    // The user locates the message and a context cut reports that prompt,
    // its first half served from the cache.
    st_.locate(prompt_, now_);
    st_.mark_context_cut(2, prompt_, int64_t(prompt_.size() / 2), now_);
    frames(3);
    ASSERT_NE(st_.tree.located, kNoNode);
    ASSERT_NE(st_.tree.context_cut.node, kNoNode);
    ASSERT_GT(st_.tree.view.stats().cut_marks_drawn, 0);
    ASSERT_EQ(st_.draft_line(), "") << "the user's engine drafts nothing";
  }

  // Frames until `done`, up to a minute on a loaded machine.
  template <typename Pred>
  bool frames_until(Pred done) {
    for (int i = 0; i < 6000 && !done(); ++i) {
      frames(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  // Neither the located message nor the context cut shows on this tree.
  void expect_no_user_marks(const std::string& where) {
    SCOPED_TRACE(where);
    EXPECT_EQ(st_.tree.located, kNoNode) << "the chat's located ring is on this tree";
    EXPECT_EQ(st_.tree.located_partial, kNoNode) << "the chat's located ring is on this tree";
    EXPECT_EQ(st_.tree.context_cut.node, kNoNode) << "the chat's context cut is on this tree";
    EXPECT_EQ(st_.tree.view.stats().cut_marks_drawn, 0);
  }

  std::vector<Token> prompt_;
};

TEST_F(TreeMarks, TheChatsMarksStayOffALessonAndItsCountersOffTheUsersStats) {
  st_.lesson.demo.by_hand = true;
  ASSERT_TRUE(st_.start_lesson(drafts_scenario(), now_));
  ASSERT_TRUE(frames_until([&] { return st_.lesson_shown(); })) << st_.lesson.error;
  for (size_t step = 0; step < st_.lesson.demo.steps(); ++step) {
    ASSERT_TRUE(frames_until([&] { return st_.lesson.demo.can_advance(); }));
    ASSERT_TRUE(st_.lesson_next(now_));
    ASSERT_TRUE(frames_until([&] {
      return st_.lesson.demo.results()[step].finished && st_.source.pending.empty() &&
             !st_.lesson.demo.in_flight();
    })) << st_.lesson.demo.caption();
    frames(3);
    expect_no_user_marks("lesson step " + std::to_string(step + 1));
  }
  EXPECT_NE(st_.draft_line(), "") << "the lesson drafted: its own stats say so";

  st_.end_lesson(now_, "back to your own cache");
  frames(3);
  EXPECT_EQ(st_.draft_line(), "") << "the lesson's drafts are in the user's stats";
  EXPECT_EQ(st_.tier_line(), "");
  // The user's own marks are back on the user's tree.
  EXPECT_NE(st_.tree.located, kNoNode);
  EXPECT_NE(st_.tree.context_cut.node, kNoNode);
  EXPECT_GT(st_.tree.view.stats().cut_marks_drawn, 0);
}

TEST_F(TreeMarks, ARestartedEngineStartsWithoutTheOldTreesMarks) {
  // Clear cache / new settings: the app makes a new engine, which caches
  // the same prompt again (a re-warmed system prompt).
  std::unique_ptr<Engine> fresh = panel::make_test_engine();
  ASSERT_NE(fresh, nullptr);
  ASSERT_TRUE(fresh->last_logits(prompt_).ok());
  st_.set_feed(panel::make_engine_feed(*fresh), now_);
  frames(3);
  expect_no_user_marks("the new engine's tree");
  st_.set_feed(nullptr, now_);
}

}  // namespace
}  // namespace rc::ui

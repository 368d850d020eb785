// What the lesson tests on the bundled model share: a lesson's own engine
// built and waited for, and its demo run step by step by hand, each step's
// events replayed into the panel's tree model as the panel would.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "panel/cache-feed.h"
#include "panel/demo-scenarios.h"
#include "panel/lesson-engine.h"
#include "panel/tree-model.h"

namespace rc::ui::panel {

// Builds `config` (with a disk tier of its own when `temp_disk`) and waits
// until it is ready; a failure to build is a test failure.
inline void build_lesson(LessonEngine& lesson, const EngineConfig& config, bool temp_disk = false) {
  lesson.build(config, temp_disk);
  for (int i = 0; i < 60000 && lesson.poll() == LessonEngine::State::building; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(lesson.state(), LessonEngine::State::ready) << lesson.error();
}

// A demo running on a lesson engine, with the tree model the panel would
// keep of it.
struct LessonRun {
  explicit LessonRun(Engine& engine) : e(engine), feed(make_lesson_feed(engine)) {
    model.reset(feed->snapshot(), 0);
    demo.by_hand = true;
  }

  // Runs every step of scenario `k`, one by one; `after_step(step)` runs
  // once each step finished and its events are in the model. Stops at the
  // first failed step (a fatal test failure).
  void run(size_t k, const std::function<void(size_t)>& after_step = {}) {
    ASSERT_TRUE(demo.start(k, &e, 0));
    for (size_t step = 0; step < demo.steps(); ++step) {
      ASSERT_TRUE(demo.next_step(now));
      for (int i = 0; i < 120000 && !demo.results()[step].finished; ++i) {
        demo.poll(&e, now, false);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        now += 0.001;
      }
      ASSERT_TRUE(demo.results()[step].finished) << demo.caption();
      ASSERT_EQ(demo.results()[step].error, "");
      bool lost = false;
      for (const CacheEvent& ev : feed->drain(&lost))
        ASSERT_NE(model.apply(ev, now), ApplyResult::needs_resync) << ev.seq;
      ASSERT_FALSE(lost);
      if (after_step) after_step(step);
    }
  }

  Engine& e;
  std::unique_ptr<CacheFeed> feed;
  TreeModel model;
  DemoRunner demo;
  double now = 0;
};

}  // namespace rc::ui::panel

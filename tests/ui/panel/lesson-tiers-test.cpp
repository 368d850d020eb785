// The Tiers lesson on the bundled model, without a window: its own engine
// with a disk tier in a temporary folder, the demo's chats overflowing the
// 512-token pool, and the first chat asked again. The panel's tree model
// follows the events and must count demotions and promotions, mark nodes the
// tiers hold from a snapshot, and still equal the engine's node set.
#include <gtest/gtest.h>

#include <filesystem>

#include "lesson-run.h"
#include "require-test-model.h"
#include "test-paths.h"

namespace rc::ui::panel {
namespace {

size_t tiers_scenario() {
  const auto& all = demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].disk_tier) return i;
  ADD_FAILURE() << "no tiers lesson";
  return 0;
}

TEST(TiersLesson, ChatsSinkToDiskAndTheFirstComesBackLoaded) {
  RC_REQUIRE_TEST_MODEL();
  const size_t k = tiers_scenario();
  ModelInfo user;
  user.path = rc::test::test_model_path();
  user.backend = "cpu";
  user.kv_type = "F16";
  LessonEngine lesson;
  build_lesson(lesson, lesson_config(user, CacheSetting::radix, demo_scenarios()[k].pool_tokens),
               true);
  if (HasFatalFailure()) return;
  Engine& e = *lesson.engine();
  ASSERT_TRUE(e.stats().tiers.enabled);
  const std::string folder = lesson.temp_disk();
  ASSERT_TRUE(std::filesystem::is_directory(folder));

  LessonRun run(e);
  TreeModel& model = run.model;
  // Each step's words against its counts: a step that says leaves sink
  // demotes some, one that says a leaf fades demotes none.
  const DemoScenario& lesson_s = demo_scenarios()[k];
  uint64_t demoted_before = 0;
  run.run(k, [&](size_t step) {
    const std::string& words = lesson_s.steps[step].caption;
    const uint64_t demoted = model.tier_counts().demotions - demoted_before;
    demoted_before = model.tier_counts().demotions;
    if (words.find("sink") != std::string::npos)
      EXPECT_GT(demoted, 0u) << "step " << step + 1 << " says: " << words;
    if (words.find("fades") != std::string::npos) {
      EXPECT_EQ(demoted, 0u) << "step " << step + 1 << " says: " << words;
      EXPECT_GT(run.demo.results()[step].evicted_tokens, 0u) << "step " << step + 1;
    }
  });
  if (HasFatalFailure()) return;
  const std::vector<DemoStepResult>& r = run.demo.results();
  uint64_t evicted = 0, written = 0;
  for (const DemoStepResult& x : r) {
    evicted += x.evicted_tokens;
    written += x.tier_blocks_written;
  }
  EXPECT_GT(written, 0u) << "no block was written below the pool";
  EXPECT_GT(evicted, 0u) << "the pool never overflowed";
  const RequestMetrics& again = r.back().metrics;
  EXPECT_GT(again.loaded_tokens, 0) << "the first chat was not loaded back";
  EXPECT_LE(again.loaded_tokens, again.cached_tokens);
  EXPECT_EQ(again.cached_tokens + again.computed_tokens, again.prompt_tokens);

  // The panel's counts come from the events; the marks from a snapshot.
  EXPECT_GT(model.tier_counts().demotions, 0u);
  EXPECT_GT(model.tier_counts().promotions, 0u);
  EXPECT_EQ(model.tier_counts().promoted_tokens, e.stats().tiers.loaded_tokens);
  const CacheSnapshot snap = run.feed->snapshot();
  model.refresh_held_below(snap);
  ASSERT_EQ(snap.held_below.size(), snap.nodes.size());
  uint64_t marked = 0, held = 0;
  for (size_t i = 0; i < snap.nodes.size(); ++i) {
    held += snap.held_below[i];
    const TreeNode* n = model.find(snap.nodes[i].id);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->held_below, snap.held_below[i]);
    marked += n->held_below;
  }
  EXPECT_GT(held, 0u);
  EXPECT_EQ(marked, held);
  EXPECT_EQ(model.infos().size(), snap.nodes.size());

  lesson.release();
  EXPECT_FALSE(std::filesystem::exists(folder)) << "the lesson's disk tier outlived it";
}

}  // namespace
}  // namespace rc::ui::panel

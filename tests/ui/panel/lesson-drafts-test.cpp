// The Drafted decoding lesson on the bundled model, without a window: its
// own engine drafts (whatever the app's setting), the question asked again
// is drafted from the first reply's node and every drafted token is kept,
// a new question drafts nothing from the tree; the panel's tree model counts
// the drafts from the events, marks that node, and still equals the
// engine's node set.
#include <gtest/gtest.h>

#include "lesson-run.h"
#include "require-test-model.h"
#include "test-paths.h"
#include "ui/panel/headless-panel.h"

namespace rc::ui::panel {
namespace {

TEST(DraftsLesson, TheQuestionAskedAgainIsDraftedFromTheFirstReply) {
  RC_REQUIRE_TEST_MODEL();
  const size_t k = drafts_scenario();
  const DemoScenario& s = demo_scenarios()[k];
  ASSERT_EQ(s.steps.size(), 3u);
  ASSERT_EQ(s.steps[1].messages.size(), s.steps[0].messages.size());
  for (size_t i = 0; i < s.steps[0].messages.size(); ++i)
    EXPECT_EQ(s.steps[1].messages[i].content, s.steps[0].messages[i].content)
        << "step 2 asks step 1 again";
  for (const DemoScenario& other : demo_scenarios())
    if (&other != &s) EXPECT_FALSE(other.speculate) << other.name;
  ModelInfo user;
  user.path = rc::test::test_model_path();
  user.backend = "cpu";
  user.kv_type = "F16";
  const EngineConfig config = scenario_config(user, s, CacheSetting::radix, 2048);
  EXPECT_EQ(config.speculate, SpeculateSetting::tree);
  EXPECT_EQ(scenario_config(user, demo_scenarios()[0], CacheSetting::radix, 2048).speculate,
            SpeculateSetting::off);
  LessonEngine lesson;
  build_lesson(lesson, config);
  if (HasFatalFailure()) return;
  Engine& e = *lesson.engine();

  LessonRun run(e);
  uint64_t tree_drafts[3] = {0, 0, 0};
  run.run(k, [&](size_t step) { tree_drafts[step] = run.model.draft_counts().tree_drafts; });
  if (HasFatalFailure()) return;
  const TreeModel& model = run.model;
  const std::vector<DemoStepResult>& r = run.demo.results();
  const RequestMetrics& again = r[1].metrics;
  EXPECT_EQ(again.output_tokens, r[0].metrics.output_tokens);
  EXPECT_GE(again.drafted_tokens, again.output_tokens / 2) << "the reply was not drafted";
  EXPECT_EQ(again.accepted_tokens, again.drafted_tokens) << "a greedy repeat keeps every draft";
  EXPECT_GT(tree_drafts[1], tree_drafts[0]);
  EXPECT_EQ(tree_drafts[2], tree_drafts[1]) << "a new question has nothing in the tree to draft";

  // The counts come from the events; the mark sits on the first reply's
  // node, which starts where the prompt ends.
  uint64_t drafted = 0, accepted = 0;
  for (const DemoStepResult& x : r) {
    drafted += uint64_t(x.metrics.drafted_tokens);
    accepted += uint64_t(x.metrics.accepted_tokens);
  }
  EXPECT_EQ(model.draft_counts().drafted_tokens, drafted);
  EXPECT_EQ(model.draft_counts().accepted_tokens, accepted);
  int marked = 0;
  for (const auto& [id, n] : model.nodes()) {
    if (n.drafted_at == kNever) continue;
    ++marked;
    EXPECT_EQ(n.depth_tokens, again.prompt_tokens) << "node #" << id;
    EXPECT_GE(n.draft_kept, uint32_t(again.accepted_tokens) / 2);
  }
  EXPECT_EQ(marked, 1);
  const CacheSnapshot snap = run.feed->snapshot();
  EXPECT_EQ(model.infos(), snap.nodes);
  lesson.release();
}

}  // namespace
}  // namespace rc::ui::panel

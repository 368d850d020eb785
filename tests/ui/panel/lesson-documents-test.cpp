// The Documents lesson on the bundled model, without a window: the same two
// documents clicked in two orders share only the system prompt, and laid
// out in library order share the system prompt and both documents. The
// matched counts are checked against the prompts' own tokens, and the tree
// the panel draws holds both orders as document-marked branches.
#include <gtest/gtest.h>

#include <algorithm>

#include "lesson-run.h"
#include "panel/document-marks.h"
#include "require-test-model.h"
#include "test-paths.h"

namespace rc::ui::panel {
namespace {

size_t documents_scenario() {
  const auto& all = demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name.rfind("Documents", 0) == 0) return i;
  ADD_FAILURE() << "no documents lesson";
  return 0;
}

// Tokens two prompts share from the start.
int64_t shared_tokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  return std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin();
}

TEST(DocumentsLesson, ClickOrderSharesTheSystemPromptCanonicalOrderBothDocuments) {
  RC_REQUIRE_TEST_MODEL();
  const size_t k = documents_scenario();
  const DemoScenario& s = demo_scenarios()[k];
  ASSERT_EQ(s.steps.size(), 3u);
  ModelInfo user;
  user.path = rc::test::test_model_path();
  user.backend = "cpu";
  user.kv_type = "F16";
  LessonEngine lesson;
  build_lesson(lesson, scenario_config(user, s, CacheSetting::radix, 4096));
  if (HasFatalFailure()) return;
  Engine& e = *lesson.engine();

  // What each step sends, and where its system prompt and its documents end.
  std::vector<std::vector<int32_t>> prompt;
  for (const DemoStep& step : s.steps) prompt.push_back(e.render_chat(step.messages).value());
  const std::string system_text = "Answer from the documents below, in one or two sentences.";
  ASSERT_EQ(s.steps[0].messages[0].content.rfind(system_text, 0), 0u);
  const int64_t system_end =
      shared_tokens(e.render_chat({{"system", system_text}}).value(), prompt[0]);
  const int64_t documents_end =
      shared_tokens(e.render_chat({s.steps[2].messages[0]}).value(), prompt[2]);
  ASSERT_GT(documents_end, system_end + 60) << "two documents of some length";
  EXPECT_EQ(s.steps[0].messages[0].content, s.steps[2].messages[0].content)
      << "question 1 clicked the documents in library order";
  EXPECT_NE(s.steps[1].messages[0].content, s.steps[2].messages[0].content);

  LessonRun run(e);
  run.run(k);
  if (HasFatalFailure()) return;
  const CacheSnapshot snap = run.feed->snapshot();
  const int page = snap.page_size;
  const std::vector<DemoStepResult>& r = run.demo.results();
  EXPECT_EQ(r[0].metrics.cached_tokens, 0);
  // Click order: the match ends where the prompts part, right after the
  // system prompt (and the documents' heading both orders start with).
  const RequestMetrics& clicked = r[1].metrics;
  EXPECT_EQ(clicked.cached_tokens, shared_tokens(prompt[0], prompt[1]) / page * page);
  EXPECT_GE(clicked.cached_tokens, system_end - page);
  EXPECT_LE(clicked.cached_tokens, system_end + 16) << "more than the system prompt matched";
  EXPECT_GT(clicked.computed_tokens, documents_end - system_end - 16)
      << "both documents are computed again";
  // Canonical order: the system prompt and both documents match.
  const RequestMetrics& canonical = r[2].metrics;
  EXPECT_GE(canonical.cached_tokens, documents_end / page * page);
  EXPECT_LT(canonical.cached_tokens, canonical.prompt_tokens) << "the question is computed";
  EXPECT_LT(canonical.computed_tokens, clicked.computed_tokens / 3);

  // The tree drawn: the documents in both orders, each order's two
  // documents marked on its own branch below the shared system prompt
  // (whose tail holds the header both orders begin with).
  std::vector<std::vector<std::string>> orders;
  for (const CacheNodeInfo& n : snap.nodes) {
    auto parent = std::find_if(snap.nodes.begin(), snap.nodes.end(),
                               [&](const CacheNodeInfo& p) { return p.id == n.parent; });
    const std::string before = parent == snap.nodes.end() ? "" : e.detokenize(parent->tokens);
    const std::vector<std::string> names = document_names(e.detokenize(n.tokens), before);
    if (names.size() == 2) orders.push_back(names);
  }
  std::sort(orders.begin(), orders.end());
  EXPECT_EQ(orders,
            (std::vector<std::vector<std::string>>{{"loaf.md", "log.md"}, {"log.md", "loaf.md"}}));
  EXPECT_EQ(run.model.infos(), snap.nodes);
  lesson.release();
}

}  // namespace
}  // namespace rc::ui::panel

// What the window-less panel suites share: an Engine on the bundled model,
// the panel's frames as paintGL runs them (an ImGui context must be
// current: headless-imgui.h), a fixture with both, and the drafted
// decoding lesson.
#pragma once

#include <gtest/gtest.h>
#include <imgui.h>

#include <filesystem>
#include <memory>

#include "panel/cache-panel-state.h"
#include "radixchat/engine.h"
#include "skip-or-fail.h"
#include "test-paths.h"
#include "ui/panel/headless-imgui.h"

namespace rc::ui::panel {

// An engine on the bundled model with two threads; null (and a failure
// recorded) when it does not load.
inline std::unique_ptr<Engine> make_test_engine(int64_t pool_tokens = 4096) {
  EngineConfig cfg;
  cfg.model_path = rc::test::test_model_path();
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = pool_tokens;
  auto e = Engine::create(cfg);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  return e.ok() ? std::move(e.value()) : nullptr;
}

// `n` frames of 1/60 s: sync, draw, render.
inline void run_frames(CachePanelState& st, double& now, int n) {
  for (int i = 0; i < n; ++i) {
    now += 1.0 / 60;
    ImGui::NewFrame();
    st.sync(now);
    st.draw(now);
    ImGui::Render();
  }
}

// A panel state, an engine on the bundled model (skipped, or failed under
// RADIXCHAT_TESTS_MUST_RUN, without it) and a 900x800 headless ImGui. A
// suite's SetUp calls this one first and returns on a skip or failure.
class PanelEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(rc::test::test_model_path()))
      RC_SKIP_OR_FAIL("no model at " << rc::test::test_model_path());
    engine_ = make_test_engine();
    ASSERT_NE(engine_, nullptr);
    imgui_ = std::make_unique<HeadlessImGui>(ImVec2(900, 800), 15.0f);
  }
  bool stopped() const { return IsSkipped() || HasFatalFailure(); }
  void frames(int n) { run_frames(st_, now_, n); }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<HeadlessImGui> imgui_;
  CachePanelState st_;
  double now_ = 0;
};

// The index of the drafted decoding lesson in demo_scenarios().
inline size_t drafts_scenario() {
  const auto& all = demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].speculate) return i;
  ADD_FAILURE() << "no drafted decoding lesson";
  return 0;
}

}  // namespace rc::ui::panel

// What the window-less panel suites share: an Engine on the bundled model,
// the panel's frames as paintGL runs them, and the drafted decoding lesson.
// Use with headless-imgui.h (an ImGui context must be current for frames).
#pragma once

#include <gtest/gtest.h>
#include <imgui.h>

#include <memory>

#include "panel/cache-panel-state.h"
#include "radixchat/engine.h"
#include "test-paths.h"

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

// The index of the drafted decoding lesson in demo_scenarios().
inline size_t drafts_scenario() {
  const auto& all = demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].speculate) return i;
  ADD_FAILURE() << "no drafted decoding lesson";
  return 0;
}

}  // namespace rc::ui::panel

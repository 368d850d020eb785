// "Why did this request miss" for a live chat message, without a
// window or GL: an Engine on the bundled model caches one prompt; a second
// prompt shares its long system prompt except for a planted date. Locating
// the second in the panel explains it against the cache now through the
// app's explainer (app/gui/recording-source, recording/miss-analysis).
//
// Oracles: the divergence is the first token where the two prompts differ;
// "would reuse" is what a walk of the same snapshot gives for the second
// prompt with the first one's date; the panel's explanation is
// explain_miss on that snapshot, called directly; the Node tab draws it
// (ImGui's log of the frame's text).
#include <gtest/gtest.h>
#include <imgui.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include "panel/cache-panel-state.h"
#include "radixchat/engine.h"
#include "recording-source.h"
#include "recording/miss-analysis.h"
#include "skip-or-fail.h"
#include "test-paths.h"
#include "ui/panel/headless-imgui.h"

namespace rc::ui {
namespace {

using rc::test::test_model_path;

std::vector<ChatMessage> chat(const std::string& date, const std::string& question) {
  return {{"system", "You are the RadixChat assistant. Today is " + date +
                         ". Answer in plain words, keep every reply short, say so when you are not "
                         "sure, and never invent a source or a quotation you cannot check."},
          {"user", question}};
}

// Prompt tokens on a cached path of `tree`, token by token (the oracle for
// "would have reused": nothing of miss-analysis in it).
int64_t cached_prefix(const CacheSnapshot& tree, const std::vector<Token>& p) {
  std::map<NodeId, std::vector<const CacheNodeInfo*>> children;
  for (const CacheNodeInfo& n : tree.nodes)
    if (n.id != kRootNode) children[n.parent].push_back(&n);
  NodeId at = kRootNode;
  size_t i = 0;
  for (;;) {
    const CacheNodeInfo* next = nullptr;
    for (const CacheNodeInfo* c : children[at])
      if (i < p.size() && !c->tokens.empty() && c->tokens[0] == p[i]) next = c;
    if (!next) return int64_t(i);
    size_t k = 0;
    while (k < next->tokens.size() && i < p.size() && next->tokens[k] == p[i]) ++k, ++i;
    if (k < next->tokens.size()) return int64_t(i);
    at = next->id;
  }
}

class LiveMiss : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test_model_path()))
      RC_SKIP_OR_FAIL("no model at " << test_model_path());
    EngineConfig cfg;
    cfg.model_path = test_model_path();
    cfg.n_threads = 2;
    cfg.kv_pool_tokens = 4096;
    auto e = Engine::create(cfg);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    engine_ = std::move(e.value());

    imgui_ = std::make_unique<panel::HeadlessImGui>(ImVec2(1100, 900), 15.0f);
  }
  std::vector<Token> render(const std::vector<ChatMessage>& m) {
    auto r = engine_->render_chat(m);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r.value() : std::vector<Token>{};
  }
  // One frame; returns the text ImGui drew in the panel's window. The log
  // goes to a file: ending a top-level window finishes ImGui's log and
  // drops its buffer, while a file keeps what was written.
  std::string frame(CachePanelState& st) {
    now_ += 1.0 / 60;
    // One file per process: ctest runs this suite's tests side by side.
    const std::string path =
        ::testing::TempDir() + "live-miss-frame-" + std::to_string(::getpid()) + ".txt";
    std::filesystem::remove(path);
    ImGui::NewFrame();
    ImGui::LogToFile(-1, path.c_str());
    st.sync(now_);
    st.draw(now_);
    ImGui::LogFinish();
    ImGui::Render();
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<panel::HeadlessImGui> imgui_;
  double now_ = 0;
};

TEST_F(LiveMiss, APlantedDateDivergesAtItsStartAndRealigns) {
  const std::vector<Token> a = render(chat("2026-05-01", "Which planets have rings?"));
  const std::vector<Token> b = render(chat("2026-06-02", "How far away is the Moon?"));
  // The second prompt with the first one's date: what the cache would have
  // served without the divergence.
  const std::vector<Token> b_same_date = render(chat("2026-05-01", "How far away is the Moon?"));
  ASSERT_EQ(b.size(), b_same_date.size()) << "the dates tokenize to spans of one length";
  size_t d = 0;
  while (d < a.size() && d < b.size() && a[d] == b[d]) ++d;
  ASSERT_GT(d, 20u) << "a long shared system prompt before the date";
  ASSERT_TRUE(engine_->last_logits(a).ok());  // the first is cached

  CachePanelState st;
  st.tree.view.animate = false;
  st.tree.view.smooth_camera = false;
  st.set_feed(panel::make_engine_feed(*engine_), now_);
  st.miss_explainer = gui::make_miss_explainer();
  frame(st);
  const CacheSnapshot tree = engine_->cache_snapshot();
  ASSERT_EQ(cached_prefix(tree, a), int64_t(a.size()));
  const int64_t would = cached_prefix(tree, b_same_date);
  ASSERT_GT(would, int64_t(d) + 20) << "the shared part after the date is cached";

  // Another tab on screen: the message's Cache button opens the Node tab.
  st.frame.select_tab = "Events";
  frame(st);
  frame(st);
  ASSERT_EQ(st.frame.current_tab, "Events");
  st.locate(b, now_);
  ASSERT_TRUE(st.tree.live_miss_valid);
  const panel::MissView& v = st.tree.live_miss;
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.prompt_tokens, int64_t(b.size()));
  EXPECT_EQ(v.divergence, int64_t(d));
  EXPECT_TRUE(v.realigned);
  EXPECT_EQ(v.would_reuse, would);
  EXPECT_EQ(v.matched_tokens, -1) << "a live prompt's match time is unknown";

  // Exactly explain_miss on the same snapshot.
  const recording::MissExplanation m = recording::explain_miss(tree, b);
  EXPECT_EQ(v.divergence, m.divergence);
  EXPECT_EQ(v.realigned, m.realigned);
  EXPECT_EQ(v.would_reuse, m.would_reuse);
  EXPECT_EQ(v.run_after, m.run_after);
  EXPECT_EQ(v.prompt_span, engine_->detokenize(m.prompt_span));
  EXPECT_EQ(v.cached_span, engine_->detokenize(m.cached_span));
  EXPECT_NE(v.prompt_span.find("6"), std::string::npos) << v.prompt_span;
  EXPECT_NE(v.cached_span.find("5"), std::string::npos) << v.cached_span;
  const std::string before = engine_->detokenize(std::vector<Token>(b.begin(), b.begin() + d));
  ASSERT_FALSE(v.before.empty());
  EXPECT_EQ(before.substr(before.size() - v.before.size()), v.before);

  // The Node tab, on the located node, draws it.
  ASSERT_EQ(st.tree.selected,
            st.tree.located_partial != kNoNode ? st.tree.located_partial : st.tree.located);
  frame(st);
  const std::string text = frame(st);
  if (std::getenv("LIVE_MISS_DUMP")) std::printf("%s\n", text.c_str());
  EXPECT_EQ(st.frame.current_tab, "Node");
  EXPECT_NE(text.find("against the cache now"), std::string::npos) << text;
  EXPECT_NE(text.find("diverges at token " + std::to_string(d)), std::string::npos) << text;
  EXPECT_NE(text.find("Realigned"), std::string::npos) << text;
  EXPECT_NE(text.find("Without the divergence " + std::to_string(would) + " of " +
                      std::to_string(b.size()) + " tokens would have been reused"),
            std::string::npos)
      << text;

  // Another node selected: the section goes with the located one.
  st.tree.select(kRootNode);
  frame(st);
  EXPECT_EQ(frame(st).find("Why it missed"), std::string::npos);

  // Once the second prompt runs, the cache now holds it: against the tree
  // as it is, a full hit, said plainly.
  const uint64_t cached_before = engine_->stats().cached_tokens;
  ASSERT_TRUE(engine_->last_logits(b).ok());
  const int64_t b_cached = int64_t(engine_->stats().cached_tokens - cached_before);
  EXPECT_LE(b_cached, int64_t(d));
  frame(st);
  st.locate(b, now_);
  frame(st);
  EXPECT_EQ(st.tree.live_miss.divergence, int64_t(b.size()));
  EXPECT_NE(frame(st).find("a full hit"), std::string::npos);

  // With what its reply says (prompt length, cached when it ran), the
  // request's own path is left out: the explanation is the one from before
  // it ran. The located tokens are a reply's: its prompt, then its text.
  std::vector<Token> reply_path = b;
  for (Token t : render(chat("2026-06-02", "Thanks!"))) reply_path.push_back(t);
  panel::LocatedRequest req;
  req.prompt_tokens = int64_t(b.size());
  req.cached_tokens = b_cached;
  st.locate(reply_path, now_, req);
  ASSERT_TRUE(st.tree.live_miss_valid);
  const panel::MissView& w = st.tree.live_miss;
  ASSERT_TRUE(w.ok) << w.error;
  EXPECT_EQ(w.prompt_tokens, int64_t(b.size()));
  EXPECT_EQ(w.matched_tokens, b_cached);
  EXPECT_EQ(w.divergence, int64_t(d));
  EXPECT_TRUE(w.realigned);
  EXPECT_EQ(w.would_reuse, would);
  frame(st);
  const std::string own = frame(st);
  EXPECT_NE(own.find(std::to_string(b_cached) + " of " + std::to_string(b.size()) +
                     " prompt tokens were cached"),
            std::string::npos)
      << own;
  EXPECT_NE(own.find("less what this request added"), std::string::npos) << own;
  EXPECT_NE(own.find("diverges at token " + std::to_string(d)), std::string::npos) << own;
}

// Another tree shown (a new engine, a recording, a lesson): the explanation
// was about the old one and goes.
TEST_F(LiveMiss, ANewFeedDropsTheExplanation) {
  const std::vector<Token> b = render(chat("2026-06-02", "How far away is the Moon?"));
  CachePanelState st;
  st.miss_explainer = gui::make_miss_explainer();
  st.set_feed(panel::make_engine_feed(*engine_), now_);
  frame(st);
  st.locate(b, now_);
  EXPECT_TRUE(st.tree.live_miss_valid);
  EXPECT_NE(frame(st).find("Why it missed"), std::string::npos);
  st.set_feed(panel::make_engine_feed(*engine_), now_);
  EXPECT_FALSE(st.tree.live_miss_valid);
  frame(st);
  st.tree.select(kRootNode);
  EXPECT_EQ(frame(st).find("Why it missed"), std::string::npos);
}

// The cut: the second prompt's path below its match leaves, the first's
// stays whole.
TEST_F(LiveMiss, WithoutOwnPathKeepsOtherPaths) {
  const std::vector<Token> a = render(chat("2026-05-01", "Which planets have rings?"));
  const std::vector<Token> b = render(chat("2026-06-02", "How far away is the Moon?"));
  size_t d = 0;
  while (a[d] == b[d]) ++d;
  ASSERT_TRUE(engine_->last_logits(a).ok());
  ASSERT_TRUE(engine_->last_logits(b).ok());
  const CacheSnapshot now = engine_->cache_snapshot();
  ASSERT_EQ(cached_prefix(now, b), int64_t(b.size()));
  const CacheSnapshot cut = panel::without_own_path(now, b, int64_t(d));
  EXPECT_EQ(cached_prefix(cut, b), int64_t(d));
  EXPECT_EQ(cached_prefix(cut, a), int64_t(a.size()));
  EXPECT_LT(cut.nodes.size(), now.nodes.size());
  // Cut inside the shared node: it keeps its first tokens, the rest leaves.
  const CacheSnapshot mid = panel::without_own_path(now, b, int64_t(d / 2));
  EXPECT_EQ(cached_prefix(mid, b), int64_t(d / 2));
  EXPECT_EQ(cached_prefix(mid, a), int64_t(d / 2));
  // A prompt that leaves the tree before `keep` cuts nothing.
  std::vector<Token> other = b;
  other[2] = other[2] == 7 ? 8 : 7;
  EXPECT_EQ(panel::without_own_path(now, other, int64_t(d)).nodes.size(), now.nodes.size());
}

// The bundled template's fixed closing, measured from the engine: any two
// questions end with exactly those tokens, and differ just before them.
TEST_F(LiveMiss, TemplateClosingTokensEndEveryQuestion) {
  const int n = recording::template_closing_tokens(*engine_);
  ASSERT_GT(n, 0);
  const std::vector<Token> a = render({{"user", "What is a KV cache?"}});
  const std::vector<Token> b = render({{"user", "Tell me a joke about trees"}});
  ASSERT_GT(a.size(), size_t(n));
  ASSERT_GT(b.size(), size_t(n));
  EXPECT_TRUE(std::equal(a.end() - n, a.end(), b.end() - n));
  EXPECT_NE(a[a.size() - n - 1], b[b.size() - n - 1]);
}

TEST_F(LiveMiss, NoExplainerNoSection) {
  const std::vector<Token> b = render(chat("2026-06-02", "How far away is the Moon?"));
  CachePanelState st;
  st.set_feed(panel::make_engine_feed(*engine_), now_);
  frame(st);
  st.locate(b, now_);
  EXPECT_FALSE(st.tree.live_miss_valid);
  frame(st);
  EXPECT_EQ(frame(st).find("Why it missed"), std::string::npos);
}

}  // namespace
}  // namespace rc::ui
